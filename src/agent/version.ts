/** The agent software version reported in the Hello: the package version. */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** Reads `version` from the repository's package.json once. */
export function agentVersion(): string {
  if (cached === undefined) {
    try {
      cached =
        (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? '0.0.0';
    } catch {
      cached = '0.0.0';
    }
  }
  return cached;
}

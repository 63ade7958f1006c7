/**
 * Makes sure the dashboard is built before `outpost demo` serves it: right after `npm ci` there is no `web/dist`, and
 * after a `git pull` it may be older than its sources. Builds with Vite's API (a dev dependency); where Vite is not
 * installed (a production install), the demo runs without the dashboard and says so.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../shared/logger.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What {@link ensureWebBuild} did. */
export type WebBuildOutcome = 'up-to-date' | 'built' | 'unavailable';

/** The newest modification time under `path` (0 when it does not exist). */
function newest(path: string): number {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const entry of readdirSync(path)) max = Math.max(max, newest(join(path, entry)));
  return max;
}

/** True when `web/dist/index.html` is missing or older than the dashboard's sources or the generated API types. */
function webBuildIsStale(root = ROOT): boolean {
  const built = statSync(join(root, 'web', 'dist', 'index.html'), { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) return true;
  const sources = [
    join(root, 'web', 'src'),
    join(root, 'web', 'index.html'),
    join(root, 'web', 'vite.config.ts'),
    join(root, 'src', 'gen'),
  ];
  return sources.some((s) => newest(s) > built);
}

/** Builds `web/dist` when stale. Never throws: a failed build is logged and reported as `unavailable`. */
export async function ensureWebBuild(logger: Logger, root = ROOT): Promise<WebBuildOutcome> {
  if (!webBuildIsStale(root)) return 'up-to-date';
  let vite: typeof import('vite');
  try {
    vite = await import('vite');
  } catch {
    logger.warn('the dashboard is not built and Vite is not installed (npm ci installs it): the demo runs without the web page');
    return 'unavailable';
  }
  const started = Date.now();
  try {
    await vite.build({ configFile: join(root, 'web', 'vite.config.ts'), logLevel: 'warn' });
  } catch (err) {
    logger.error({ err }, 'building the dashboard failed: the demo runs without the web page (see `npm run build`)');
    return 'unavailable';
  }
  logger.info({ ms: Date.now() - started }, 'dashboard built into web/dist');
  return 'built';
}

/**
 * The properties a Run Job stage reads from its container's log, parsed as Clouddriver's `PropertyParser` does: a line
 * containing `SPINNAKER_PROPERTY_<KEY>=<value>` sets the lower-cased key (the value ends at the next `=`, as in
 * Clouddriver), a line starting with `SPINNAKER_CONFIG_JSON=` merges the JSON object after it. Malformed JSON is an
 * error naming its line (Clouddriver fails the same request).
 */

const PROPERTY = 'SPINNAKER_PROPERTY_';
const JSON_LINE = /^\s*SPINNAKER_CONFIG_JSON=/;

/** Thrown for a `SPINNAKER_CONFIG_JSON=` line whose JSON does not parse to an object. */
export class PropertyFileError extends Error {}

/** The properties in `log`. */
export function parsePropertyFile(log: string): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [n, rawLine] of log.split('\n').entries()) {
    const line = rawLine.replace(/\r$/, '');
    if (line.includes(PROPERTY)) {
      const parts = line.split('=');
      if (parts.length >= 2) properties[parts[0]!.replace(PROPERTY, '').toLowerCase()] = parts[1]!.trim();
    }
    if (JSON_LINE.test(line)) {
      const text = line.replace(JSON_LINE, '');
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        throw new PropertyFileError(`SPINNAKER_CONFIG_JSON on log line ${n + 1} is not valid JSON: ${(err as Error).message}`);
      }
      if (!value || typeof value !== 'object' || Array.isArray(value))
        throw new PropertyFileError(`SPINNAKER_CONFIG_JSON on log line ${n + 1} is not a JSON object`);
      Object.assign(properties, value);
    }
  }
  return properties;
}

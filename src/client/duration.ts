/**
 * Durations as shell users type them (`30s`, `2m`, `1h30m`, `500ms`, Go/kubectl style) and as the API carries them
 * (`google.protobuf.Duration`).
 */
import { create } from '@bufbuild/protobuf';
import { DurationSchema, type Duration } from '@bufbuild/protobuf/wkt';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses `1h2m3s`, `30s`, `2m`, `1.5s`, `250ms` into milliseconds. A bare number means seconds (`30` = 30 s).
 * Throws RangeError naming the input when it is not a duration. Zero is returned as 0 (the caller decides).
 */
export function parseDuration(text: string): number {
  const value = text.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(value)) {
    throw new RangeError(`invalid duration "${text}" (examples: 30s, 2m, 1h30m, 500ms)`);
  }
  let ms = 0;
  for (const [, num, , unit] of value.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g)) ms += Number(num) * UNIT_MS[unit!]!;
  return Math.round(ms);
}

/** Milliseconds → `google.protobuf.Duration`. */
export function toProtoDuration(ms: number): Duration {
  const seconds = Math.floor(ms / 1000);
  return create(DurationSchema, { seconds: BigInt(seconds), nanos: Math.round((ms - seconds * 1000) * 1e6) });
}

/** `google.protobuf.Duration` → milliseconds (0 when absent). */
export function fromProtoDuration(duration: Duration | undefined): number {
  if (!duration) return 0;
  return Number(duration.seconds) * 1000 + duration.nanos / 1e6;
}

/** Short human form: `850ms`, `12s`, `3m4s`, `2h1m` (kubectl's AGE style for the larger ones). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 && h < 8 ? `${m % 60}m` : ''}`;
  return `${Math.floor(h / 24)}d`;
}

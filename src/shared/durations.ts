/**
 * Operation timeouts as protobuf Durations and as text: what the gateway's operations, its replica forwards and its
 * Spinnaker calls all convert, kept below every one of them.
 */
import type { Duration } from '@bufbuild/protobuf/wkt';

/** A Duration for a number of milliseconds. */
export function msToDuration(ms: number): Duration {
  const whole = Math.max(0, Math.floor(ms));
  return { $typeName: 'google.protobuf.Duration', seconds: BigInt(Math.floor(whole / 1000)), nanos: (whole % 1000) * 1_000_000 };
}

/** `30s`, `1.5s`, `250ms`: how the gateway writes a timeout in messages. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  return `${Number((ms / 1000).toFixed(3))}s`;
}

/** Milliseconds of a Duration (not validated). */
export function durationToMs(d: Duration): number {
  return Number(d.seconds) * 1000 + d.nanos / 1_000_000;
}

import { durationMs, timestampMs, type Duration, type Timestamp } from '@bufbuild/protobuf/wkt';
import { OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';

/** Display helpers. They never throw and render missing values as "—" so tables keep their shape. */

/** Shown for a value the server did not send. */
export const NONE = '—';

/** Milliseconds since the epoch of a protobuf Timestamp, or undefined when unset. */
function toMs(ts: Timestamp | undefined): number | undefined {
  return ts ? timestampMs(ts) : undefined;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * A local date and time, "2026-11-23 18:46:48" (24 h, no locale surprises), always with the date: a page left
 * open overnight, or a row from last week, must not read as today. Undefined or zero timestamps give "—".
 */
export function formatTime(ts: Timestamp | undefined): string {
  const ms = toMs(ts);
  if (ms === undefined || ms === 0) return NONE;
  return formatLocalMs(ms);
}

/** formatTime for milliseconds since the epoch (the stale-data banner's "since"). */
export function formatLocalMs(ms: number): string {
  const d = new Date(ms);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

/** ISO 8601 for a <time dateTime> attribute, or undefined. */
export function isoTime(ts: Timestamp | undefined): string | undefined {
  const ms = toMs(ts);
  return ms ? new Date(ms).toISOString() : undefined;
}

/** A duration in ms as "0.42 ms", "12 ms", "1.25 s", "3 min 04 s" or "2 h 03 min". Negative or NaN gives "—". */
export function formatMs(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return NONE;
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${pad(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
}

/** A protobuf Duration, formatted as formatMs does. */
export function formatDuration(d: Duration | undefined): string {
  return d ? formatMs(durationMs(d)) : NONE;
}

/** The time from `from` to `to`, or "—" when either is unset (the step has not happened). */
export function formatBetween(from: Timestamp | undefined, to: Timestamp | undefined): string {
  const a = toMs(from);
  const b = toMs(to);
  return a && b ? formatMs(b - a) : NONE;
}

/** "3 s ago", "5 min ago", "2 h ago", "4 d ago"; "—" when unset. */
export function formatAgo(ts: Timestamp | undefined, now: number = Date.now()): string {
  const ms = toMs(ts);
  if (!ms) return NONE;
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** One formatter for every count: `toLocaleString` builds a new one per call, which a 5,000-row table felt. */
const COUNT_FORMAT = new Intl.NumberFormat('en-US');

/** Counts with thousands separators ("100,000"); accepts the bigints of uint64 fields. */
export function formatCount(n: number | bigint): string {
  return COUNT_FORMAT.format(n);
}

/** A rate with one decimal below 100 ("12.3/s") and none above. */
export function formatRate(perSecond: number): string {
  if (!Number.isFinite(perSecond)) return NONE;
  return `${perSecond < 100 ? perSecond.toFixed(1) : formatCount(Math.round(perSecond))}/s`;
}

/** The operation state as the API names it without its prefix: "SUCCEEDED", "TIMED_OUT"… */
export function operationStateName(state: OperationState): string {
  return OperationState[state] ?? `STATE_${state}`;
}

/** True for SUCCEEDED, FAILED and TIMED_OUT: the operation will not change again. */
export function isTerminal(state: OperationState): boolean {
  return state === OperationState.SUCCEEDED || state === OperationState.FAILED || state === OperationState.TIMED_OUT;
}

/** How a state should look: good, in progress, bad, or neutral. Colour is never the only signal (text is shown). */
export type Tone = 'good' | 'busy' | 'bad' | 'neutral';

/** The tone of an account state ("ACTIVE") or an operation state name ("SUCCEEDED"). */
export function stateTone(state: string): Tone {
  switch (state) {
    case 'ACTIVE':
    case 'READY':
    case 'SUCCEEDED':
      return 'good';
    case 'FAILED':
    case 'DELETE_FAILED':
    case 'ORPHANED':
    case 'TIMED_OUT':
    case 'REFUSED':
    case 'NOT READY':
      return 'bad';
    case 'ACTIVATING':
    case 'TO_MIGRATE':
    case 'TO_DEACTIVATE':
    case 'DEACTIVATING':
    case 'DELETING':
    case 'PENDING':
    case 'SENT':
      return 'busy';
    default:
      return 'neutral';
  }
}

/**
 * Turns sample rows into the columns of a GetHistory answer: per-second rates from each row's counts and the seconds
 * they cover, NaN where a value is not known (the counters' first step, a step without finished operations). The
 * fleet's rows are the time axis of every answer, as they exist for each step a writer ran: an account's series
 * has a value at each of those times, 0 where it wrote no row (it was idle), and its state from its transitions.
 */
import { create } from '@bufbuild/protobuf';
import { type GetHistoryResponse, GetHistoryResponseSchema, StateSeriesSchema } from '../../gen/outpost/api/v1/metrics_service_pb.js';
import type { SampleRow } from './history-store.js';

/** An account's state at the window's start and its changes in it. */
export interface StateChanges {
  initial?: string;
  changes: { at: Date; from: string; state: string }[];
  /** The state now, for an account whose transitions do not reach back to the window. */
  current: string;
}

const rate = (count: number | null, seconds: number): number => (count === null || seconds <= 0 ? Number.NaN : count / seconds);
const orNaN = (v: number | null): number => (v === null ? Number.NaN : v);

/** The fleet's answer from its rows (oldest first). */
export function fleetHistory(rows: readonly SampleRow[], stepSeconds: number, recording: boolean): GetHistoryResponse {
  const stateNames = [...new Set(rows.flatMap((r) => Object.keys(r.states ?? {})))].sort();
  return create(GetHistoryResponseSchema, {
    stepSeconds,
    recording,
    times: rows.map((r) => r.at.getTime() / 1000),
    eventsPerSecond: rows.map((r) => rate(r.events, r.seconds)),
    succeededPerSecond: rows.map((r) => rate(r.succeeded, r.seconds)),
    failedPerSecond: rows.map((r) => rate(r.failed, r.seconds)),
    timedOutPerSecond: rows.map((r) => rate(r.timedOut, r.seconds)),
    latencyP50Ms: rows.map((r) => orNaN(r.latencyP50Ms)),
    latencyP99Ms: rows.map((r) => orNaN(r.latencyP99Ms)),
    connectedAgents: rows.map((r) => r.connectedAgents),
    states: stateNames.map((state) => create(StateSeriesSchema, { state, values: rows.map((r) => r.states?.[state] ?? 0) })),
  });
}

/**
 * One account's answer: `axis` are the fleet's rows at the account's step (the times a writer sampled), `rows` the
 * account's own (a subset of those times), `states` its transitions.
 */
export function accountHistory(
  axis: readonly SampleRow[],
  rows: readonly SampleRow[],
  states: StateChanges,
  stepSeconds: number,
  recording: boolean,
): GetHistoryResponse {
  const own = new Map(rows.map((r) => [r.at.getTime(), r]));
  const points = axis.map((fleet) => {
    const row = own.get(fleet.at.getTime());
    // Idle in the step: nothing counted, unless the fleet's counters only started then.
    const events = row ? row.events : fleet.events === null ? null : 0;
    return { at: fleet.at, seconds: row?.seconds ?? fleet.seconds, events, row };
  });
  const stateAt = stateTimeline(states);
  const atTimes = points.map((p) => stateAt(p.at));
  // '' is before the account existed: no state then.
  const stateNames = [...new Set(atTimes)].filter((s) => s !== '').sort();
  return create(GetHistoryResponseSchema, {
    stepSeconds,
    recording,
    times: points.map((p) => p.at.getTime() / 1000),
    eventsPerSecond: points.map((p) => rate(p.events, p.seconds)),
    succeededPerSecond: points.map((p) => rate(p.row?.succeeded ?? 0, p.seconds)),
    failedPerSecond: points.map((p) => rate(p.row?.failed ?? 0, p.seconds)),
    timedOutPerSecond: points.map((p) => rate(p.row?.timedOut ?? 0, p.seconds)),
    latencyP50Ms: points.map((p) => orNaN(p.row?.latencyP50Ms ?? null)),
    latencyP99Ms: points.map((p) => orNaN(p.row?.latencyP99Ms ?? null)),
    states: stateNames.map((state) => create(StateSeriesSchema, { state, values: atTimes.map((s) => (s === state ? 1 : 0)) })),
  });
}

/** The account's state at a time: the last change at or before it, else the state it started the window in ('' before it existed). */
function stateTimeline(states: StateChanges): (at: Date) => string {
  const before = states.initial ?? states.changes[0]?.from ?? states.current;
  return (at) => {
    let state = before;
    for (const c of states.changes) {
      if (c.at.getTime() > at.getTime()) break;
      state = c.state;
    }
    return state;
  };
}

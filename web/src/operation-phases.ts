import { durationMs, timestampMs } from '@bufbuild/protobuf/wkt';
import type { OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { formatMs, isTerminal } from './format.js';

/**
 * An operation's timeline: the phases between the timestamps the gateway records and the time the agent reports
 * spending in Kubernetes, as the operation page's bar and the history's small bars draw them (operation-timeline.tsx,
 * timeline-bar.tsx). Pure and clock-free (the caller passes `now`), so node tests run it as the browser does.
 *
 *   received ─store→ stored ─dispatch→ sent ─agent + Kubernetes→ result ─result→ end
 *
 * Timestamps come from gateway replicas whose clocks may differ, and a running phase is measured against the
 * browser's clock: a negative gap is clamped to 0 rather than drawn backwards.
 */

/** The phases in the order they happen (and are drawn). */
const PHASE_NAMES = ['store', 'dispatch', 'agent', 'kubernetes', 'result'] as const;

/** One of {@link PHASE_NAMES}; also the suffix of its CSS class (`phase-store`…, styles/timeline.css). */
export type PhaseName = (typeof PHASE_NAMES)[number];

/** The name shown for each phase, and what it measures (the legend's tooltip, docs/dashboard.md). */
export const PHASE_INFO: Record<PhaseName, { label: string; meaning: string }> = {
  store: { label: 'store', meaning: 'received → stored: the checks and the sealing of Secret values before the insert' },
  dispatch: { label: 'dispatch', meaning: "stored → sent down the agent's stream: the insert, then waiting for an agent" },
  agent: { label: 'agent', meaning: "sent → result, less the agent's Kubernetes time: the stream both ways and the agent's own work" },
  kubernetes: { label: 'Kubernetes', meaning: "the agent's Kubernetes API calls, retries included, as the agent reports them" },
  result: { label: 'result', meaning: 'result received → operation ended (the gateway stamps both as the result arrives: 0 ms)' },
};

/**
 * How a phase ended: `done` between two recorded instants; `running` not ended yet, measured to `now`; `cut` the
 * operation ended during it without reaching the next step (it timed out, or failed waiting for an agent).
 */
type PhaseStatus = 'done' | 'running' | 'cut';

/** One phase of an operation. */
export interface Phase {
  name: PhaseName;
  /** Its length in milliseconds, never negative. */
  ms: number;
  status: PhaseStatus;
}

/** The phases an operation went through so far, in order, with their sum and the longest. */
export interface OperationPhases {
  phases: Phase[];
  /** The sum of the phases' lengths (the bar's full width). */
  totalMs: number;
  /** The longest phase, if any phase lasted more than 0 ms; the first of equals. */
  slowest: PhaseName | undefined;
}

/** What the phases are computed from: an OperationRecord, or any object with its timing fields. */
export type PhaseSource = Pick<OperationRecord, 'state' | 'receivedAt' | 'storedAt' | 'sentAt' | 'resultAt' | 'totalDuration'> & {
  result?: Pick<NonNullable<OperationRecord['result']>, 'kubernetesDuration'>;
};

const gap = (from: number, to: number): number => Math.max(0, to - from);

/**
 * The phases of `op` as of `now` (ms since the epoch; Date.now() in the browser). Each phase runs from the previous
 * recorded instant to its own; a step not recorded while a later one is (a read is sent without being stored) gives
 * its phase 0 ms. The first step not reached ends the list: that phase is `running` to `now` while the operation
 * is open, or `cut` at its end once terminal. The Kubernetes phase appears only when the result reports the
 * agent's Kubernetes time (Outpost's agent always does), at most the whole sent → result span. Callers must pass
 * the same `now` for every row they compare.
 */
export function operationPhases(op: PhaseSource, now: number): OperationPhases {
  const ms = (ts: OperationRecord['receivedAt']) => (ts ? timestampMs(ts) : undefined);
  const received = ms(op.receivedAt);
  const terminal = isTerminal(op.state);
  const ended = received !== undefined && op.totalDuration ? received + durationMs(op.totalDuration) : undefined;
  const steps: [PhaseName, number | undefined][] = [
    ['store', ms(op.storedAt)],
    ['dispatch', ms(op.sentAt)],
    ['agent', ms(op.resultAt)],
    ['result', ms(op.resultAt) !== undefined ? ended : undefined],
  ];
  const phases: Phase[] = [];
  let from = received;
  for (const [index, [name, at]] of steps.entries()) {
    if (from === undefined) break;
    if (at !== undefined) {
      phases.push({ name, ms: gap(from, at), status: 'done' });
      from = at;
      continue;
    }
    if (steps.slice(index + 1).some(([, later]) => later !== undefined)) {
      phases.push({ name, ms: 0, status: 'done' });
      continue;
    }
    if (!terminal) phases.push({ name, ms: gap(from, now), status: 'running' });
    else if (ended !== undefined) phases.push({ name, ms: gap(from, ended), status: 'cut' });
    break;
  }
  splitKubernetes(phases, op.result?.kubernetesDuration ? durationMs(op.result.kubernetesDuration) : undefined);
  const totalMs = phases.reduce((sum, p) => sum + p.ms, 0);
  let slowest: Phase | undefined;
  for (const p of phases) if (p.ms > 0 && (!slowest || p.ms > slowest.ms)) slowest = p;
  return { phases, totalMs, slowest: slowest?.name };
}

/** Takes the reported Kubernetes time out of a finished agent phase, as its own phase right after it. */
function splitKubernetes(phases: Phase[], kubernetesMs: number | undefined): void {
  const at = phases.findIndex((p) => p.name === 'agent');
  const agent = phases[at];
  if (kubernetesMs === undefined || !agent || agent.status !== 'done') return;
  const kubernetes = Math.min(Math.max(0, kubernetesMs), agent.ms);
  phases.splice(at, 1, { ...agent, ms: agent.ms - kubernetes }, { name: 'kubernetes', ms: kubernetes, status: 'done' });
}

/** A phase's length as text: "12 ms", "3.20 s so far" (running), "30.0 s (ended here)" (cut). */
export function phaseLength(p: Phase): string {
  const suffix = p.status === 'running' ? ' so far' : p.status === 'cut' ? ' (ended here)' : '';
  return `${p.ms === 0 ? '0 ms' : formatMs(p.ms)}${suffix}`;
}

/** One phase as text: "agent 12 ms", "dispatch 3.20 s so far", "agent 30.0 s (ended here)". */
export function describePhase(p: Phase): string {
  return `${PHASE_INFO[p.name].label} ${phaseLength(p)}`;
}

/**
 * The whole timeline as one line, for the bar's accessible name and the history's tooltips: "store 2 ms, dispatch
 * 1 ms, agent 8 ms, Kubernetes 4 ms, result 0 ms; slowest: agent". Empty phases give "no timing recorded".
 */
export function describePhases({ phases, slowest }: OperationPhases): string {
  if (phases.length === 0) return 'no timing recorded';
  const list = phases.map(describePhase).join(', ');
  return slowest ? `${list}; slowest: ${PHASE_INFO[slowest].label}` : list;
}

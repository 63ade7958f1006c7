/**
 * Reading an operation timeline for the timeline test: the phases a record's timestamps give, computed here from
 * the API's record on their own (not with web/src/operation-phases.ts, which the test checks), and the phases a
 * drawn bar shows — each rect's name, its share of the bar's width as laid out, whether it is still running.
 */
import { durationMs, timestampMs, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Locator } from 'playwright-core';
import type { OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';

/** A phase's name and length in ms. */
export interface ExpectedPhase {
  name: string;
  ms: number;
}

const at = (ts: Timestamp | undefined, what: string): number => {
  if (!ts) throw new Error(`the record has no ${what}`);
  return timestampMs(ts);
};

/**
 * The phases of a finished operation with an agent result, as docs/dashboard.md defines them: store = received →
 * stored, dispatch = stored → sent, agent = sent → result less the agent's Kubernetes time, Kubernetes = that time
 * (at most sent → result), result = result → end; negative gaps count 0.
 */
export function expectedPhases(record: OperationRecord): ExpectedPhase[] {
  const received = at(record.receivedAt, 'receivedAt');
  const stored = at(record.storedAt, 'storedAt');
  const sent = at(record.sentAt, 'sentAt');
  const result = at(record.resultAt, 'resultAt');
  if (!record.totalDuration || !record.result?.kubernetesDuration) throw new Error('the record is not finished with a result');
  const ended = received + durationMs(record.totalDuration);
  const span = Math.max(0, result - sent);
  const kubernetes = Math.min(span, durationMs(record.result.kubernetesDuration));
  return [
    { name: 'store', ms: Math.max(0, stored - received) },
    { name: 'dispatch', ms: Math.max(0, sent - stored) },
    { name: 'agent', ms: span - kubernetes },
    { name: 'kubernetes', ms: kubernetes },
    { name: 'result', ms: Math.max(0, ended - result) },
  ];
}

/** The longest of `phases` (the first of equals), or undefined when none lasted. */
export function longest(phases: ExpectedPhase[]): string | undefined {
  let best: ExpectedPhase | undefined;
  for (const p of phases) if (p.ms > 0 && (!best || p.ms > best.ms)) best = p;
  return best?.name;
}

/** A drawn bar: its width in CSS px and its phases in drawing order. */
export interface DrawnBar {
  px: number;
  phases: { name: string; share: number; running: boolean }[];
}

/** Reads a timeline bar (an `svg.timeline-bar`): each phase's laid-out width over the track's. */
export function readBar(bar: Locator): Promise<DrawnBar> {
  return bar.evaluate((svg) => {
    const px = svg.querySelector('rect.timeline-track')!.getBoundingClientRect().width;
    const phases = [...svg.querySelectorAll('rect[data-phase]')].map((r) => ({
      name: r.getAttribute('data-phase')!,
      share: r.getBoundingClientRect().width / px,
      running: r.classList.contains('is-running'),
    }));
    return { px, phases };
  });
}

/**
 * Why `drawn` does not match `expected` (names in order, each share within half a percent and a pixel of the
 * phase's share of the total), or undefined when it does.
 */
export function barMismatch(drawn: DrawnBar, expected: ExpectedPhase[]): string | undefined {
  const names = drawn.phases.map((p) => p.name).join(',');
  if (names !== expected.map((p) => p.name).join(',')) return `phases ${names}, expected ${expected.map((p) => p.name).join(',')}`;
  const total = expected.reduce((sum, p) => sum + p.ms, 0);
  const tolerance = 0.005 + 1 / drawn.px;
  for (const [i, p] of expected.entries()) {
    const want = total > 0 ? p.ms / total : 0;
    const got = drawn.phases[i]!.share;
    if (Math.abs(got - want) > tolerance) {
      return `${p.name}: ${(got * 100).toFixed(2)}% of ${drawn.px} px drawn, ${(want * 100).toFixed(2)}% expected (${p.ms} of ${total} ms)`;
    }
  }
  return undefined;
}

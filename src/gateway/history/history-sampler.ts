/**
 * Works out the sample rows of one step from the shared database: the fleet's row every fleet step, the rows of the
 * accounts that had events or finished operations at each account step, and both again at each day step. Event
 * counts are the growth of each account's `events_total` since the same series' previous sample, kept in memory —
 * so the first step after this replica took the writing over only starts the counters (its events are null), and
 * the writer must call {@link HistorySampler.reset} whenever it lost the lease. Operations come from the operations
 * that ended in the step (`finished_at`), latency is their reception-to-end time.
 */
import type { Db } from '../../db/database.js';
import type { metricSamples } from '../../db/schema.js';
import { readAccountActivity } from '../accounts/account-reads.js';
import { liveSessionsByReplica } from '../agents/agent-session-reads.js';
import { endedOperationStats, type EndedOperationStats } from '../operations/operation-summary-reads.js';

/** A row to insert. */
type NewSample = typeof metricSamples.$inferInsert;

/** The three series the writer keeps: the fleet's hour, the accounts' hour, the day (fleet and accounts). */
type Series = 'fleet' | 'account' | 'day';

/** Steps of the three series, in seconds (the config's `history`). */
export interface HistorySteps {
  stepSeconds: number;
  accountStepSeconds: number;
  dayStepSeconds: number;
}

/** One step's rows, and how to make them the baseline of the next step once they are stored. */
interface PreparedStep {
  rows: NewSample[];
  /** Call after the rows were stored: the next step counts from this one. */
  commit(): void;
}

/** Computes steps; one per writer, called by one loop (not concurrently). */
export interface HistorySampler {
  /** The rows due at `at` (a multiple of the fleet step). */
  prepare(at: Date): Promise<PreparedStep>;
  /** Forgets the counters (after losing the lease): the next step only starts them again. */
  reset(): void;
}

/** What the sampler reads with. */
export interface HistorySamplerOptions {
  db: Db;
  steps: HistorySteps;
  /** Session rows untouched for this long belong to a dead replica (agent-session-reads.ts). */
  staleAfterSeconds: number;
}

interface Baseline {
  at: number;
  totals: Map<string, number>;
}

/** Creates the sampler of one writer. */
export function createHistorySampler(options: HistorySamplerOptions): HistorySampler {
  const { db, steps } = options;
  const baselines = new Map<Series, Baseline>();
  const stepOf: Record<Series, number> = {
    fleet: steps.stepSeconds,
    account: steps.accountStepSeconds,
    day: steps.dayStepSeconds,
  };

  const due = (at: Date): Series[] => {
    const s = at.getTime() / 1000;
    return (['fleet', 'account', 'day'] as const).filter((series) => s % stepOf[series] === 0);
  };

  return {
    async prepare(at) {
      const series = due(at);
      const [accounts, sessions] = await Promise.all([readAccountActivity(db), liveSessionsByReplica(db, options.staleAfterSeconds)]);
      const connectedAgents = [...sessions.values()].reduce((a, b) => a + b, 0);
      const states: Record<string, number> = {};
      const totals = new Map<string, number>();
      for (const a of accounts) {
        states[a.state] = (states[a.state] ?? 0) + 1;
        totals.set(a.name, a.eventsTotal);
      }
      const rows: NewSample[] = [];
      for (const s of series) {
        const step = stepOf[s];
        const baseline = baselines.get(s);
        const from = new Date(baseline?.at ?? at.getTime() - step * 1000);
        const seconds = (at.getTime() - from.getTime()) / 1000;
        const ops = await endedOperationStats(db, from, at);
        const byAccount = new Map(ops.filter((o) => o.account !== undefined).map((o) => [o.account!, o]));
        const deltas = eventDeltas(totals, baseline);
        const fleetOps = ops.find((o) => o.account === undefined);
        if (s !== 'account') {
          const events = deltas ? [...deltas.values()].reduce((a, b) => a + b, 0) : null;
          rows.push({ resolution: step, scope: '', at, seconds, events, ...opsColumns(fleetOps), connectedAgents, states });
        }
        if (s === 'fleet') continue;
        // An account's rows: only those that changed (an idle account writes nothing).
        const names = new Set([...byAccount.keys(), ...[...(deltas ?? [])].filter(([, n]) => n > 0).map(([name]) => name)]);
        for (const name of names) {
          rows.push({
            resolution: step,
            scope: name,
            at,
            seconds,
            events: deltas ? (deltas.get(name) ?? 0) : null,
            ...opsColumns(byAccount.get(name)),
          });
        }
      }
      return {
        rows,
        commit() {
          for (const s of series) baselines.set(s, { at: at.getTime(), totals });
        },
      };
    },

    reset() {
      baselines.clear();
    },
  };
}

/** Each account's events since the baseline (an account new since then counts from 0); undefined without one. */
function eventDeltas(totals: Map<string, number>, baseline: Baseline | undefined): Map<string, number> | undefined {
  if (!baseline) return undefined;
  const deltas = new Map<string, number>();
  for (const [name, total] of totals) deltas.set(name, Math.max(0, total - (baseline.totals.get(name) ?? 0)));
  return deltas;
}

function opsColumns(stats: EndedOperationStats | undefined) {
  return {
    succeeded: stats?.succeeded ?? 0,
    failed: stats?.failed ?? 0,
    timedOut: stats?.timedOut ?? 0,
    latencyP50Ms: stats?.p50Ms ?? null,
    latencyP99Ms: stats?.p99Ms ?? null,
  };
}

/**
 * Scenario — history cost: what the charts' samples cost Postgres per hour (docs/scaling.md, "The history of the
 * charts"). For each fleet size, a fresh database with that many accounts, and the history writer driven through one
 * simulated hour at the default steps (10 s fleet, 60 s accounts, 300 s day) with its own clock — the statements,
 * rows and bytes are those of a real hour; only the waiting is skipped. Each minute a share of the accounts stores
 * events (spread over the minute's steps): 10 % (a fleet at work) and 100 % (every account busy every minute, the
 * bound). Measured over the hour: rows written per resolution, the table's size with its indexes, the WAL the
 * writer's steps generated (pg_current_wal_lsn around each step, so the simulated activity is not counted), and each
 * step's time (reads and insert) — the writer's share of one replica.
 */
import { sql } from 'drizzle-orm';
import { openDatabase } from '../../src/db/database.js';
import { rowsOf } from '../../src/db/query-helpers.js';
import type { HistorySteps } from '../../src/gateway/history/history-sampler.js';
import { createHistoryWriter } from '../../src/gateway/history/history-writer.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase } from '../../testkit/databases.js';
import { figureRow, type Row } from '../rows.js';

/** Parameters of one run. */
export interface HistoryCostParams {
  postgresUrl: string;
  /** Fleet sizes. */
  accounts: number[];
  /** Shares of the accounts that store events in each minute. */
  activeShares: number[];
  /** Simulated minutes (60: an hour; figures are per hour either way). */
  minutes: number;
}

/** One fleet size and activity. */
interface HistoryCostCase {
  accounts: number;
  activeShare: number;
  /** Per hour. */
  fleetRows: number;
  accountRows: number;
  dayRows: number;
  tableBytes: number;
  walBytes: number;
  stepMs: { p50: number; p99: number; max: number };
}

/** Figures of the scenario. */
export interface HistoryCostResult {
  cases: HistoryCostCase[];
}

const STEPS: HistorySteps = { stepSeconds: 10, accountStepSeconds: 60, dayStepSeconds: 300 };
/** A day step's boundary, so the hour starts aligned. */
const T0 = 1_800_000_000_000;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

async function runCase(postgresUrl: string, accounts: number, activeShare: number, minutes: number): Promise<HistoryCostCase> {
  const testDb = await createTestDatabase('postgres', postgresUrl);
  const database = await openDatabase(testDb.url);
  const run = async (text: string) => rowsOf(await database.db.execute(sql.raw(text)));
  try {
    await run(`insert into accounts (name, state, events_total)
               select 'acct-' || lpad(i::text, 6, '0'), 'ACTIVE', 0 from generate_series(1, ${accounts}) as i`);
    const writer = createHistoryWriter({
      db: database.db,
      replicaId: 'bench',
      steps: STEPS,
      staleAfterSeconds: 60,
      logger: createSilentLogger(),
    });
    const stepsPerMinute = 60 / STEPS.stepSeconds;
    const perStep = Math.round((accounts * activeShare) / stepsPerMinute);
    let walBytes = 0;
    const stepMs: number[] = [];
    let next = 0;
    for (let s = 0; s <= minutes * stepsPerMinute; s++) {
      if (s > 0 && perStep > 0) {
        // The next `perStep` accounts in turn store 5 events each: over a minute, activeShare of the fleet.
        await run(`update accounts set events_total = events_total + 5
                   where name in (select 'acct-' || lpad((((i - 1) % ${accounts}) + 1)::text, 6, '0')
                                  from generate_series(${next + 1}, ${next + perStep}) as i)`);
        next = (next + perStep) % accounts;
      }
      const [before] = await run('select pg_current_wal_lsn()::text as lsn');
      const t0 = performance.now();
      await writer.step(T0 + s * STEPS.stepSeconds * 1000 + 1000);
      stepMs.push(performance.now() - t0);
      const [after] = await run(`select pg_wal_lsn_diff(pg_current_wal_lsn(), '${before!.lsn}')::bigint as bytes`);
      walBytes += Number(after!.bytes);
    }
    await writer.close();
    const counts = await run('select resolution, count(*)::int as n from metric_samples group by resolution');
    const rowsOfResolution = (r: number) => Number(counts.find((c) => Number(c.resolution) === r)?.n ?? 0);
    const [size] = await run(`select pg_total_relation_size('metric_samples')::bigint as bytes`);
    const perHour = 60 / minutes;
    return {
      accounts,
      activeShare,
      fleetRows: rowsOfResolution(STEPS.stepSeconds) * perHour,
      accountRows: rowsOfResolution(STEPS.accountStepSeconds) * perHour,
      dayRows: rowsOfResolution(STEPS.dayStepSeconds) * perHour,
      tableBytes: Number(size!.bytes) * perHour,
      walBytes: walBytes * perHour,
      stepMs: { p50: pct(stepMs, 50), p99: pct(stepMs, 99), max: Math.max(...stepMs) },
    };
  } finally {
    await database.close();
    await testDb.drop();
  }
}

/** Runs every fleet size with every activity share. */
export async function runHistoryCost(p: HistoryCostParams): Promise<HistoryCostResult> {
  const cases: HistoryCostCase[] = [];
  for (const accounts of p.accounts) {
    for (const share of p.activeShares) cases.push(await runCase(p.postgresUrl, accounts, share, p.minutes));
  }
  return { cases };
}

/** The scenario's rows: per case, rows and bytes per hour and the step time. */
export function historyCostRows(r: HistoryCostResult): Row[] {
  return r.cases.flatMap((c) => {
    const s = `history-cost: ${c.accounts} accounts, ${Math.round(c.activeShare * 100)} % with events each minute`;
    const mib = (b: number) => b / (1024 * 1024);
    return [
      figureRow(s, 'rows written per hour (fleet + accounts + day)', [c.fleetRows + c.accountRows + c.dayRows], { digits: 0 }),
      figureRow(s, 'of which account rows per hour', [c.accountRows], { digits: 0 }),
      figureRow(s, 'table and indexes after an hour, MiB', [mib(c.tableBytes)], { digits: 1 }),
      figureRow(s, "WAL of the writer's steps per hour, MiB", [mib(c.walBytes)], { digits: 1 }),
      figureRow(s, 'writer step (reads + insert), p50 ms', [c.stepMs.p50], { digits: 1 }),
      figureRow(s, 'writer step (reads + insert), p99 ms', [c.stepMs.p99], { digits: 1 }),
    ];
  });
}

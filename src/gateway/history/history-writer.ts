/**
 * The loop that records the history: at every fleet step (on the step's boundary, plus a second so operations that
 * ended just before it are committed) it takes or renews the writer's lease, and only the holder samples and writes —
 * one replica at a time, whichever that is, and another one takes over within three steps when it dies. At each
 * day step the holder also deletes rows past their window. Failures are logged and the step skipped; the next one
 * counts from the last stored step, so no event is lost from the counts, only the points in between.
 */
import type { Db } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import { createHistorySampler, type HistorySteps } from './history-sampler.js';
import { claimHistoryWriter, deleteSamplesBefore, insertSamples, releaseHistoryWriter } from './history-store.js';

/** Delay after a step's boundary before it is sampled (half the step when the step is shorter than two of them). */
const SAMPLE_DELAY_MS = 1000;
/** The lease outlives this many steps without renewal. */
const LEASE_STEPS = 3;
/** How long rows are kept past their window: hour series 2 h, day series 26 h. */
const HOUR_KEEP_MS = 2 * 3600_000;
const DAY_KEEP_MS = 26 * 3600_000;

/**
 * When the loop samples, for a fleet step of `stepSeconds`: a tick at `now` samples the boundary `at(now)`, the last
 * one at least the sampling delay before it; the next tick comes at `nextTick(now)`, the delay after the next
 * boundary. The delay is shorter than the step, so successive ticks sample successive boundaries (with a delay of a
 * whole step every other one would be skipped, and at a 1 s step a 2 s account step might never fall due).
 */
export function sampleSchedule(stepSeconds: number): { at(nowMs: number): number; nextTick(nowMs: number): number } {
  const stepMs = stepSeconds * 1000;
  const delayMs = Math.min(SAMPLE_DELAY_MS, stepMs / 2);
  const at = (nowMs: number) => Math.floor((nowMs - delayMs) / stepMs) * stepMs;
  return { at, nextTick: (nowMs) => at(nowMs) + stepMs + delayMs };
}

/** The running writer. */
export interface HistoryWriter {
  /**
   * Runs one step as the loop would at `now` (tests drive it with their own clock): it samples the last boundary at
   * least the sampling delay (1 s, or half a shorter step) before `now`. True when it wrote.
   */
  step(now: number): Promise<boolean>;
  /** Starts the loop on real timers. */
  start(): void;
  /** Stops the loop, waits for a step under way, and gives the lease up so another replica takes over at once. */
  close(): Promise<void>;
}

/** What the writer needs. */
export interface HistoryWriterOptions {
  db: Db;
  replicaId: string;
  steps: HistorySteps;
  /** Session rows untouched for this long belong to a dead replica (the sampler's count of connected agents). */
  staleAfterSeconds: number;
  logger: Logger;
  /** Clock for the loop's timers (ms since the epoch). */
  now?: () => number;
}

/** Creates the writer (idle until `start`). */
export function createHistoryWriter(options: HistoryWriterOptions): HistoryWriter {
  const { db, steps, logger } = options;
  const sampler = createHistorySampler({ db, steps, staleAfterSeconds: options.staleAfterSeconds });
  const now = options.now ?? Date.now;
  const plan = sampleSchedule(steps.stepSeconds);
  const leaseSeconds = Math.max(5, LEASE_STEPS * steps.stepSeconds);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let closed = false;
  let holding = false;
  let lastAt = 0;

  const step = async (nowMs: number): Promise<boolean> => {
    const at = plan.at(nowMs);
    if (at <= lastAt) return false;
    const held = await claimHistoryWriter(db, options.replicaId, leaseSeconds);
    if (!held) {
      if (holding) logger.info('history: another replica writes the samples now');
      holding = false;
      sampler.reset();
      return false;
    }
    if (!holding) logger.info('history: this replica writes the samples');
    holding = true;
    const prepared = await sampler.prepare(new Date(at));
    await insertSamples(db, prepared.rows);
    prepared.commit();
    lastAt = at;
    if ((at / 1000) % steps.dayStepSeconds === 0) {
      await deleteSamplesBefore(db, steps.stepSeconds, new Date(at - HOUR_KEEP_MS));
      if (steps.accountStepSeconds !== steps.stepSeconds) {
        await deleteSamplesBefore(db, steps.accountStepSeconds, new Date(at - HOUR_KEEP_MS));
      }
      await deleteSamplesBefore(db, steps.dayStepSeconds, new Date(at - DAY_KEEP_MS));
    }
    return true;
  };

  const schedule = () => {
    if (closed) return;
    const t = now();
    const next = plan.nextTick(t);
    timer = setTimeout(() => {
      timer = undefined;
      running = step(now())
        .catch((err: unknown) => {
          logger.warn({ err }, 'history: a step failed; it is skipped');
        })
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, next - t);
    timer.unref();
  };

  return {
    step,
    start() {
      schedule();
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await running;
      if (holding) {
        holding = false;
        await releaseHistoryWriter(db, options.replicaId).catch((err: unknown) => {
          logger.warn({ err }, 'history: could not give the lease up; another replica takes over when it runs out');
        });
      }
    },
  };
}

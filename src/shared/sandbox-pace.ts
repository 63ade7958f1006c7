/**
 * The pace of the pretend cluster: how long the pretend kubelet takes to start a pod, to report it Ready and to run a
 * pod that runs to completion. These defaults live here, in a module that imports nothing and outside src/sandbox/,
 * because the command line (`outpost sandbox`, `outpost demo`) names them in its `--help` without loading the
 * sandbox (test/cli/lazy-loading.test.ts), and `startSandbox` applies them — one place for both. Together with a
 * Deployment's maxSurge/maxUnavailable, the start and ready delays set how long each step of a rolling update takes,
 * so a rollout can be watched (in Spinnaker Deck, the dashboard, `kubectl get pods -w`) rather than being over before
 * the first poll.
 */

/** Pending → Running, in milliseconds, for every pod the pretend kubelet starts. */
export const DEFAULT_POD_START_DELAY_MS = 30;

/**
 * Running → Ready, in milliseconds, for a pod that does not say otherwise (`sandbox.outpost.dev/ready-after-ms`,
 * `sandbox/ready-after:<ms>`, never-ready). 0: Ready as soon as it runs.
 */
export const DEFAULT_POD_READY_DELAY_MS = 0;

/** How long a pod that runs to completion (a Job's) runs when its annotations do not say, in milliseconds. */
export const DEFAULT_POD_RUN_MS = 100;

/** The longest delay the pace options take: the longest Node timer (about 24.8 days). */
const MAX_PACE_MS = 2 ** 31 - 1;

/**
 * Why a pace value is unusable, or undefined when it is a whole number of milliseconds in 0…{@link MAX_PACE_MS}. For
 * command-line parsers and `startSandbox`, which must refuse the same values the same way.
 */
export function paceProblem(value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be a whole number of milliseconds';
  if (value < 0) return 'must not be negative';
  if (value > MAX_PACE_MS) return `must be at most ${MAX_PACE_MS} (about 24.8 days)`;
  return undefined;
}

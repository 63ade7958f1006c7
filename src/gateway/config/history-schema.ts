/**
 * `history`: the samples behind the dashboard's charts (MetricsService, docs/dashboard.md). One replica at a time
 * writes them into the shared database at fixed steps; their cost per hour is in docs/scaling.md.
 */
import { z } from 'zod';

const seconds = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);

/** The `history` section of the gateway's configuration. */
export const historySchema = z
  .object({
    enabled: z
      .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
      .default(true)
      .describe(
        "Record the charts' samples. A replica with it off never writes them (another may); it still serves the " + 'recorded ones.',
      ),
    stepSeconds: seconds(1, 60, 10).describe(
      "Step of the fleet's hour series: one fleet row per step (events, operations by outcome, latency, agents, states).",
    ),
    accountStepSeconds: seconds(1, 600, 60).describe(
      "Step of an account's hour series, a multiple of stepSeconds: a row per step for each account with events, " +
        'finished operations or a state change in it (none for idle accounts).',
    ),
    dayStepSeconds: seconds(2, 3600, 300).describe(
      'Step of the day series (fleet and accounts), a multiple of accountStepSeconds and larger.',
    ),
  })
  .strict()
  .refine((h) => h.accountStepSeconds % h.stepSeconds === 0, {
    message: 'history.accountStepSeconds must be a multiple of history.stepSeconds',
    path: ['accountStepSeconds'],
  })
  .refine((h) => h.dayStepSeconds % h.accountStepSeconds === 0 && h.dayStepSeconds > h.accountStepSeconds, {
    message: 'history.dayStepSeconds must be a multiple of history.accountStepSeconds, and larger',
    path: ['dayStepSeconds'],
  });

/** History settings of the gateway. */
export type GatewayHistoryConfig = z.output<typeof historySchema>;

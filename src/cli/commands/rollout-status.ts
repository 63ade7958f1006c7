/**
 * `outpost rollout status KIND/NAME --account A [--watch=false] [--timeout D]`: waits until a Deployment,
 * StatefulSet or DaemonSet has rolled out, printing kubectl's progress lines as they change.
 *
 * It reads the live object (a `get` operation every {@link POLL_INTERVAL_MS}) rather than following the cache: the
 * answer must be the cluster's own, also for accounts that do not cache apps kinds (or skip them), and a verdict
 * depends on `status.observedGeneration` being as fresh as the spec, which a read from the API server guarantees.
 * The price is one small operation record per read. Like kubectl, without `--timeout` it waits until the rollout
 * ends; with it, a rollout still in progress at the deadline exits 1 ("timed out waiting for the condition").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fail, openGateway, type ClientContext, type ClientOptions } from '../../client/client-command.js';
import { toProtoDuration } from '../../client/duration.js';
import { describeClientError, ExitCode } from '../../client/errors.js';
import { describeFailure, succeeded } from '../../client/format.js';
import { createOperationClient, DEFAULT_OPERATION_TIMEOUT_MS } from '../../client/operation-client.js';
import { ROLLOUT_STATUS_KINDS, rolloutVerdict } from '../../client/rollout-status.js';
import type { ResolvedKind } from '../../shared/kind-names.js';

/** Time between two reads of the object while the rollout is in progress. */
const POLL_INTERVAL_MS = 2000;

/** Options of {@link runRolloutStatus}. */
export interface RolloutStatusOptions extends ClientOptions {
  /** false: report the current status once and exit 0 (kubectl's `--watch=false`). */
  watch: boolean;
}

/** Runs `rollout status` for one object. Reports usage errors (exit 2) itself; never throws. */
export async function runRolloutStatus(ctx: ClientContext, opts: RolloutStatusOptions, kind: ResolvedKind, name: string): Promise<void> {
  if (!(ROLLOUT_STATUS_KINDS as readonly string[]).includes(kind.kind)) {
    fail(
      ctx,
      ExitCode.USAGE,
      `no status viewer has been implemented for ${kind.kind}: rollout status takes deployments, statefulsets and daemonsets`,
    );
    return;
  }
  if (opts.id !== undefined || !opts.wait) {
    fail(ctx, ExitCode.USAGE, 'rollout status reads the object repeatedly: --id and --no-wait do not apply');
    return;
  }
  const deadline = opts.timeout === undefined ? undefined : Date.now() + opts.timeout;
  const spec = {
    case: 'get' as const,
    value: { apiVersion: kind.apiVersion, kind: kind.kind, namespace: opts.namespace ?? 'default', name },
  };
  let last = '';
  try {
    const { connection, account } = await openGateway(ctx, opts);
    const client = createOperationClient(connection);
    for (;;) {
      const remaining = deadline === undefined ? DEFAULT_OPERATION_TIMEOUT_MS : deadline - Date.now();
      const readTimeout = Math.min(DEFAULT_OPERATION_TIMEOUT_MS, Math.max(remaining, 5000));
      const record = await client.submitAndWait({ account, spec, timeout: toProtoDuration(readTimeout) });
      if (!succeeded(record)) {
        fail(ctx, ExitCode.FAILED, describeFailure(record));
        return;
      }
      const object = record.result?.objects?.find((o) => o.kind === kind.kind);
      if (!object) {
        fail(ctx, ExitCode.FAILED, `the agent returned no ${kind.kind} for ${name}`);
        return;
      }
      const verdict = rolloutVerdict(object);
      if (verdict.state === 'error') {
        fail(ctx, ExitCode.FAILED, verdict.message);
        return;
      }
      if (verdict.message !== last) ctx.io.stdout(`${verdict.message}\n`);
      last = verdict.message;
      if (verdict.state === 'done' || !opts.watch) {
        ctx.exit(ExitCode.OK);
        return;
      }
      if (deadline !== undefined && Date.now() >= deadline) {
        fail(ctx, ExitCode.FAILED, 'timed out waiting for the condition');
        return;
      }
      await sleep(deadline === undefined ? POLL_INTERVAL_MS : Math.min(POLL_INTERVAL_MS, Math.max(deadline - Date.now(), 0)));
    }
  } catch (err) {
    const { exitCode, message } = describeClientError(err, opts.gateway);
    fail(ctx, exitCode, message);
  }
}

/**
 * The periodic work of a running session: heartbeats to the gateway, the dead-peer check (no message from the gateway
 * for `AGENT_DEFAULTS.deadPeerIntervals` heartbeat intervals aborts the session), and the listing progress reports.
 * Every interval is kept in the session's record, which clears them all when the session ends.
 */
import { create } from '@bufbuild/protobuf';
import { AccountReportSchema, HeartbeatSchema, SyncProgressSchema } from '../../gen/outpost/agent/v1/agent_pb.js';
import { accountInfo } from '../accounts/account-info.js';
import { AGENT_DEFAULTS } from '../config/defaults.js';
import { send, type SessionRun } from './session-run.js';

/**
 * (Re)starts the heartbeats and the dead-peer check at the session's heartbeat interval, replacing the running ones
 * (and the other intervals kept so far: call it before starting any other). None when the interval is 0.
 */
export function startHeartbeats(run: SessionRun): void {
  for (const t of run.timers.splice(0)) clearInterval(t);
  if (run.heartbeatSeconds <= 0) return;
  const { agentId } = run.options;
  const intervalMs = run.heartbeatSeconds * 1000;
  run.timers.push(
    setInterval(
      () => send(run, { case: 'heartbeat', value: create(HeartbeatSchema, { agentId, sentAtUnixMs: BigInt(Date.now()) }) }),
      intervalMs,
    ),
  );
  const deadAfterMs = intervalMs * AGENT_DEFAULTS.deadPeerIntervals;
  run.timers.push(
    setInterval(
      () => {
        if (Date.now() - run.lastReceived > deadAfterMs) {
          run.deadPeer = `no message from the gateway for ${Math.round((Date.now() - run.lastReceived) / 1000)} s (heartbeat interval ${run.heartbeatSeconds} s); treating it as dead`;
          run.controller.abort();
        }
      },
      Math.min(1000, intervalMs / 4),
    ),
  );
}

/** Reports the listing progress of the accounts that moved since their last report, every `progressIntervalMs`. */
export function startProgressReports(run: SessionRun): void {
  run.timers.push(setInterval(() => reportProgress(run), AGENT_DEFAULTS.progressIntervalMs));
}

function reportProgress(run: SessionRun): void {
  const logger = run.options.logger;
  for (const account of run.state.accounts) {
    const active = account.watches.filter((w) => w.listInProgress || w.listFinished);
    if (active.length === 0) continue;
    // Only progress that moved is reported (and logged): each report is a database write at the gateway, and
    // hundreds of accounts re-reporting lists stalled behind backpressure saturated it, which kept them stalled.
    const key = active.map((w) => `${w.kind}/${w.namespace}:${w.listed}:${w.listInProgress ? 0 : 1}`).join(',');
    if (run.reported.get(account) === key) continue;
    run.reported.set(account, key);
    const progress = active.map((w) =>
      create(SyncProgressSchema, {
        apiVersion: w.apiVersion,
        kind: w.kind,
        namespace: w.namespace,
        listed: BigInt(w.listed),
        done: !w.listInProgress,
      }),
    );
    for (const w of active) {
      if (w.listInProgress)
        logger.info(
          { account: account.prepared.config.name, kind: w.kind, namespace: w.namespace || undefined, listed: w.listed },
          'listing',
        );
      w.listFinished = false;
    }
    send(run, { case: 'accountReport', value: create(AccountReportSchema, { account: accountInfo(account.prepared), progress }) });
  }
}

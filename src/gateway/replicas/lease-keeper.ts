/**
 * Keeps this replica's account leases (docs/architecture.md, rule 4) and moves accounts to a live agent when their holder is
 * gone, on one timer:
 * - renews every lease held here about every third of `leaseSeconds`, in one statement; a lease the database no
 *   longer gives this replica (taken over, or expired and reclaimed) demotes its account on the stream to STANDBY
 *   (the agent is told and stops watching it);
 * - every `standbyCheckIntervalSeconds`, offers the accounts whose lease is free to the local STANDBY streams that
 *   serve them (promotion), and turns accounts whose holder stopped renewing long ago INACTIVE.
 * A database error skips the tick: leases are not renewed then, and dispatch stops using them once they run out.
 */
import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import { createPeriodicJob } from '../../shared/periodic-job.js';
import { expireLeases, findFreeAccounts, renewLeases } from '../accounts/account-lease-queries.js';
import { leaseValidUntil } from '../agents/admission.js';
import type { SessionRegistry } from '../agents/session-registry.js';

/** A running keeper. */
export interface LeaseKeeper {
  start(): void;
  /** Runs the promotion check soon (a local stream just released accounts); nothing before `start()` or while a tick runs. */
  poke(): void;
  /** One full tick now (tests). */
  tick(): Promise<void>;
  /** Stops the timer and waits for a running tick. */
  stop(): Promise<void>;
}

/** Options of {@link createLeaseKeeper}. */
export interface LeaseKeeperOptions {
  gatewayId: string;
  registry: SessionRegistry;
  /** Where the leases are (the `accounts` rows, through account-lease-queries.ts). */
  db: Db;
  leaseSeconds: number;
  standbyCheckIntervalSeconds: number;
  logger: Logger;
}

/** Creates the keeper; nothing runs before `start()`. */
export function createLeaseKeeper(options: LeaseKeeperOptions): LeaseKeeper {
  const { registry, db, logger } = options;
  const renewEveryMs = (options.leaseSeconds * 1000) / 3;
  const checkEveryMs = Math.max(10, Math.min(options.standbyCheckIntervalSeconds * 1000, renewEveryMs));
  let lastRenewal = performance.now();
  let lastExpiry = 0;
  let stopped = false;
  let failing = false;

  async function renew(): Promise<void> {
    const held = registry.leases().filter((l) => l.epoch > 0);
    const sentAt = performance.now();
    lastRenewal = sentAt;
    if (held.length === 0) return;
    const renewed = await renewLeases(
      db,
      options.gatewayId,
      held.map((l) => ({ name: l.account, sessionId: l.session.id, epoch: l.epoch })),
      options.leaseSeconds,
    );
    const lostBySession = new Map<(typeof held)[number]['session'], string[]>();
    for (const lease of held) {
      if (renewed.has(lease.account)) {
        registry.grant(lease.account, lease.session, lease.epoch, leaseValidUntil(sentAt, options.leaseSeconds));
        continue;
      }
      // Lost only while the registry still holds the lease as sent: a newer grant made meanwhile is not lost.
      const now = registry.leaseOf(lease.account);
      if (now?.session !== lease.session || now.epoch !== lease.epoch) continue;
      lostBySession.set(lease.session, [...(lostBySession.get(lease.session) ?? []), lease.account]);
    }
    for (const [session, accounts] of lostBySession) {
      logger.warn(
        { sessionId: session.id, agentId: session.agentId, accounts },
        'lease renewal refused: another session holds the accounts now',
      );
      await session.leaseLost(accounts);
    }
  }

  async function promote(): Promise<void> {
    const wanted = new Map<string, ReturnType<SessionRegistry['all']>>();
    for (const session of registry.all()) {
      for (const name of session.standbyAccounts()) {
        if (registry.ownerOf(name)) continue;
        wanted.set(name, [...(wanted.get(name) ?? []), session]);
      }
    }
    if (wanted.size === 0) return;
    const free = await findFreeAccounts(db, [...wanted.keys()]);
    // Oldest session first per account; each session gets its accounts in one claim.
    const bySession = new Map<ReturnType<SessionRegistry['all']>[number], string[]>();
    for (const name of free) {
      const session = wanted.get(name)![0]!;
      bySession.set(session, [...(bySession.get(session) ?? []), name]);
    }
    for (const [session, names] of bySession) await session.promote(names);
  }

  async function tick(): Promise<void> {
    try {
      if (performance.now() - lastRenewal >= renewEveryMs) await renew();
      await promote();
      if (performance.now() - lastExpiry >= options.leaseSeconds * 1000) {
        lastExpiry = performance.now();
        const expired = await expireLeases(db, options.leaseSeconds);
        if (expired.length > 0) logger.warn({ accounts: expired }, 'accounts whose lease holder stopped renewing are INACTIVE now');
      }
      if (failing) logger.info('account leases are maintained again');
      failing = false;
    } catch (err) {
      if (!failing) logger.error({ err }, 'account lease upkeep failed; retrying');
      failing = true;
    }
  }

  // tick() logs its own failures (once per outage); the job's message is for anything it let through.
  const job = createPeriodicJob({ run: tick, intervalMs: checkEveryMs, logger, errorMessage: 'account lease upkeep failed' });

  return {
    start() {
      if (stopped) return;
      lastRenewal = performance.now();
      job.start();
    },
    poke() {
      job.runSoon();
    },
    tick: () => tick(),
    async stop() {
      stopped = true;
      await job.stop();
    },
  };
}

/**
 * What a new or resuming agent session means for open operations: a started session gets the operations it may be
 * given (its own SENT ones again, PENDING ones this replica alone dispatches), and a session that resumed another with
 * its token takes over that session's open operations. Who may receive an operation a second time is the at-most-once
 * rule of docs/architecture.md, rule 6.
 */
import type { OperationHooks } from '../agents/operation-hooks.js';
import type { LiveSession } from '../agents/session-registry.js';
import type { OperationContext } from './operation-context.js';
import type { Deliver } from './operation-delivery.js';

/** The session hooks of the manager that concern delivery. */
export type SessionRedelivery = Pick<OperationHooks, 'sessionStarted' | 'sessionResumed'>;

/** Creates the hooks over the shared context and the delivery. */
export function createSessionRedelivery(ctx: OperationContext, deliver: Deliver): SessionRedelivery {
  const { store, log, locals, report } = ctx;
  // The SENT operations a session took over from the session it resumed, not yet sent again on it. Only those go
  // again: one sent on the session itself is already in its stream. Accounts the session adds later, or a promotion,
  // start it again for those accounts; sending such an operation again would only make the agent drop a duplicate.
  const inherited = new WeakMap<LiveSession, Set<string>>();
  return {
    sessionStarted(session, accountNames) {
      (async () => {
        // A SENT operation goes again only to the session it was sent on, as resumed by this one (the agent process
        // that received it de-duplicates on its id): another agent, or a restarted one, could apply it a second time.
        // A PENDING one only from the replica that received it, and only while nothing sent it yet: it is that
        // replica's alone to dispatch (another replica's copy of the row may be stale by the time it reads it, and two
        // dispatchers could reach two agents).
        const rows = (await store.openFor(accountNames, new Date())).filter((r) => {
          if (r.state !== 'PENDING') return r.sessionId === session.id && (inherited.get(session)?.delete(r.id) ?? false);
          const local = locals.get(r.id);
          return local !== undefined && !local.sent && local.delivering === 0;
        });
        if (rows.length === 0) return;
        log.info(
          { sessionId: session.id, agentId: session.agentId, count: rows.length },
          'delivering open operations to a new agent session',
        );
        // SENT rows go back on this session only (through dispatch they could reach the account's caching stream,
        // another agent, which would apply them a second time); PENDING ones to whichever stream dispatch picks.
        await Promise.all(rows.map((row) => deliver(row, undefined, true, row.state === 'PENDING' ? undefined : session)));
      })().catch(report('could not deliver open operations to a new session', ''));
    },

    async sessionResumed(fromSessionId, session) {
      const moved = await store.repointSession(fromSessionId, session.id);
      for (const local of locals.values()) {
        if (local.sent?.sessionId === fromSessionId) local.sent = { ...local.sent, sessionId: session.id };
      }
      if (moved.length === 0) return;
      const taken = inherited.get(session) ?? new Set<string>();
      for (const id of moved) taken.add(id);
      inherited.set(session, taken);
      log.info({ fromSessionId, sessionId: session.id, count: moved.length }, 'open operations now answered by the resuming session');
    },
  };
}

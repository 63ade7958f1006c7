/**
 * Who may take over an agent's older stream: a Hello that resumes a session must present that session's token
 * (checked against the stored hash before anything is written), and a newer stream closes older streams of the same
 * agent id on this replica only when it resumed their session or authenticated as the same identity (`identityOf`)
 * and is the same of the agent's connections (`hello.connection`: an agent with two connections keeps both). A stream from
 * another identity never hijacks an agent id: it stands by (its accounts go STANDBY while the older stream lives).
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { Hello } from '../../gen/outpost/agent/v1/agent_pb.js';
import { identityOf } from '../auth/principal.js';
import type { Logger } from '../../shared/logger.js';
import type { Principal } from '../auth/principal.js';
import type { AgentSessionStore } from './agent-session-store.js';
import type { LiveSession, SessionRegistry } from './session-registry.js';

/**
 * Checks a Hello's resume pair. Returns the resumed session id (undefined when the Hello resumes nothing); throws
 * UNAUTHENTICATED "invalid session token" for a wrong or missing token, an unknown session, or a session of another
 * agent id or of another authenticated identity. A session id alone proves nothing, and a token copied from one
 * identity's agent does not let another identity take its session (and the operations sent on it) over.
 */
export async function verifyResume(hello: Hello, principal: Principal, store: AgentSessionStore, log: Logger): Promise<string | undefined> {
  const { resumeSessionId: id, resumeSessionToken: token } = hello;
  if (!id && !token) return undefined;
  const verified = id && token ? await store.verify(id, token) : undefined;
  if (!verified || verified.agentId !== hello.agentId || verified.identity === '' || verified.identity !== identityOf(principal)) {
    const otherIdentity = verified !== undefined && verified.agentId === hello.agentId;
    log.warn(
      { agentId: hello.agentId, resumeSessionId: id.slice(0, 80), tokenPresented: token !== '', otherIdentity },
      'resume refused: invalid session token',
    );
    throw new ConnectError('invalid session token', Code.Unauthenticated);
  }
  return verified.id;
}

/**
 * Closes (ABORTED) the older live streams of `session`'s agent id on this replica that it may take over: the session
 * it resumed, and streams of the same identity (`identityOf`: method and subject). Call after the Hello was verified and before admission, so
 * the accounts of the closed streams are free for the newcomer at once. Returns the session ids whose leases the
 * newcomer may take over: the resumed one (wherever it lives) and those closed here.
 */
export function supersedeOlderStreams(session: LiveSession, resumed: string | undefined, registry: SessionRegistry, log: Logger): string[] {
  const takeover = resumed ? [resumed] : [];
  for (const older of registry.sessionsOf(session.agentId)) {
    if (older === session) continue;
    if (older.id === resumed) {
      log.info({ oldSessionId: older.id }, 'session resumed with its token: the new stream takes over');
      older.close(new ConnectError('superseded: the session was resumed by a newer stream', Code.Aborted));
    } else if (older.connection !== session.connection) {
    } else if (identityOf(older.principal) === identityOf(session.principal)) {
      log.info({ oldSessionId: older.id }, 'new stream of the same agent takes over');
      older.close(new ConnectError('superseded by a newer stream of the same agent', Code.Aborted));
      takeover.push(older.id);
    } else {
      log.warn(
        { oldSessionId: older.id, oldSubject: older.principal.subject },
        'a stream of the same agent id authenticated as another identity is live; not taking it over',
      );
    }
  }
  return takeover;
}

/**
 * The Hello of an agent stream and the gateway's Welcome: the resume token is verified before anything is written,
 * older streams the newcomer may take over are closed, the accounts are admitted (verdicts), the session row is
 * written with a fresh session token, and the Welcome carries the verdicts, the stream's limits and that token. Right
 * after it, the operations feature learns which accounts the stream serves and the agent is told to serve the
 * dynamic accounts of its zone.
 */
import { create } from '@bufbuild/protobuf';
import {
  AccountAction,
  AccountCommandSchema,
  ConnectResponseSchema,
  Verdict,
  type AccountVerdict,
  type Hello,
} from '../../gen/outpost/agent/v1/agent_pb.js';
import type { Logger } from '../../shared/logger.js';
import { identityOf } from '../auth/principal.js';
import type { DynamicAccountSource } from './account-commands.js';
import { admitAccounts, type AdmissionDeps } from './admission.js';
import { createSessionToken, toVerdictLists, type AgentSessionStore } from './agent-session-store.js';
import { validateHello } from './hello-validation.js';
import type { OperationHooks } from './operation-hooks.js';
import { supersedeOlderStreams, verifyResume } from './session-takeover.js';
import type { StreamState } from './stream-state.js';

/** What the Hello handling reads and writes. */
export interface WelcomeDeps extends AdmissionDeps {
  heartbeatIntervalSeconds: number;
  maxUnacked: number;
  sessionStore: AgentSessionStore;
  operations?: OperationHooks;
  dynamicAccounts?: DynamicAccountSource;
}

/**
 * Handles the stream's one Hello. Returns true once the Welcome was queued (the caller then starts heartbeats),
 * false when the stream stopped meanwhile. Throws for an invalid Hello or resume token (nothing written then).
 */
export async function welcomeAgent(state: StreamState, hello: Hello, deps: WelcomeDeps): Promise<boolean> {
  validateHello(hello);
  // Verified before anything is written: a wrong token ends the stream with nothing changed.
  const resumed = await verifyResume(hello, state.principal, deps.sessionStore, state.log);
  if (state.stopped) return false;
  // Before the Welcome: the agent answers the resumed session's operations on this stream only after it.
  if (resumed) await deps.operations?.sessionResumed(resumed, state);
  if (state.stopped) return false;
  state.agentId = hello.agentId;
  state.zone = hello.zone;
  state.connection = hello.connection;
  state.version = hello.version;
  state.log = state.log.child(hello.connection > 0 ? { agentId: hello.agentId, connection: hello.connection } : { agentId: hello.agentId });
  const takeover = supersedeOlderStreams(state, resumed, deps.registry, state.log);
  const ordered = await admitAccounts(hello, state, state.accounts, () => state.stopped, deps, takeover);
  if (!ordered) return false;
  state.accounts.admit(ordered, hello.accounts);
  const { token, hash } = createSessionToken();
  state.sessionToken = token;
  await state.row.start(
    {
      id: state.id,
      agentId: state.agentId,
      zone: state.zone,
      version: state.version,
      subject: state.principal.subject,
      identity: identityOf(state.principal),
      gatewayId: deps.gatewayId,
      transport: state.transport,
      ...toVerdictLists(state.accounts.verdicts()),
    },
    hash,
  );
  if (state.stopped) return false;
  state.outbox.push(
    create(ConnectResponseSchema, {
      message: {
        case: 'welcome',
        value: {
          sessionId: state.id,
          gatewayId: deps.gatewayId,
          accounts: ordered,
          heartbeatIntervalSeconds: Math.max(1, Math.round(deps.heartbeatIntervalSeconds)),
          maxUnacked: deps.maxUnacked,
          sessionToken: token,
        },
      },
    }),
  );
  state.welcomed = true;
  // Served only once the Welcome is queued: no operation for an account reaches the agent before its verdict.
  const served = state.accounts.verdictSent(ordered.map((o) => o.account));
  if (served.length > 0) deps.operations?.sessionStarted(state, served);
  pushDynamicAccounts(state, deps.dynamicAccounts);
  const count = (v: Verdict) => ordered.filter((o) => o.verdict === v).length;
  state.log.info(
    {
      caching: count(Verdict.CACHING),
      standby: count(Verdict.STANDBY),
      refused: count(Verdict.REFUSED),
      resumePoints: ordered.reduce((n, o) => n + o.resume.length, 0),
      resumedSessionId: resumed,
    },
    'agent connected',
  );
  logRefusals(ordered, state.log);
  return true;
}

/** Logs each REFUSED verdict with its reason. */
export function logRefusals(ordered: readonly AccountVerdict[], log: Logger): void {
  for (const o of ordered) if (o.verdict === Verdict.REFUSED) log.warn({ account: o.account, reason: o.reason }, 'account refused');
}

/** Tells the agent to serve the dynamic accounts of its zone (after the Welcome; never blocks the stream). */
function pushDynamicAccounts(state: StreamState, source: DynamicAccountSource | undefined): void {
  if (!source) return;
  state.runInBackground(
    source.activeFor(state.zone).then((definitions) => {
      let told = 0;
      for (const account of definitions) {
        if (state.sendAccountCommand(create(AccountCommandSchema, { action: AccountAction.ADD, account }))) told++;
      }
      if (told > 0) state.log.info({ count: told }, 'told the agent to serve the dynamic accounts of its zone');
    }),
    "could not read the dynamic accounts of the agent's zone",
  );
}

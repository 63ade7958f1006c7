/**
 * Shared by the identity binding tests (accounts-identity-binding, accounts-rebind): a token-authenticated gateway on
 * which agents A and B may both register `cluster-*`, admin/reader/writer tokens, and the verdicts a stream received.
 */
import type { Verdict, ConnectResponse } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import type { TestAgentStream } from '../../testkit/test-agent-stream.js';

export const AGENT_A = 'binding-agent-a-token-0123456789abcdef';
export const AGENT_B = 'binding-agent-b-token-0123456789abcdef';
export const ADMIN = 'binding-admin-token-0123456789abcdef';
export const READER = 'binding-reader-token-0123456789abcdef';
export const WRITER = 'binding-writer-token-0123456789abcdef';

/** Gateway settings of the identity binding tests: agents A and B may both register `cluster-*`. */
export const IDENTITY_GATEWAY = {
  insecure: false,
  // The test streams send no heartbeats: a loaded machine may leave one idle for seconds between two steps.
  agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 60 },
  replicas: { leaseSeconds: 3, standbyCheckIntervalSeconds: 0.1 },
  auth: {
    tokens: [
      { subject: 'agent-a', token: AGENT_A },
      { subject: 'agent-b', token: AGENT_B },
      { subject: 'admin', token: ADMIN },
      { subject: 'reader', token: READER },
      { subject: 'writer', token: WRITER },
    ],
  },
  authorization: {
    rules: [
      { kind: 'token' as const, subject: '^agent-(a|b)$', roles: ['agent' as const], accounts: ['cluster-*'] },
      { kind: 'token' as const, subject: '^admin$', roles: ['read' as const, 'write' as const, 'admin' as const], accounts: ['*'] },
      { kind: 'token' as const, subject: '^reader$', roles: ['read' as const], accounts: [] },
      { kind: 'token' as const, subject: '^writer$', roles: ['read' as const, 'write' as const], accounts: ['*'] },
    ],
  },
};

/** The cluster of `cluster-1` as agent A reports it; anyone who can read the account sees both values. */
export const CLUSTER = { apiHost: 'https://cluster-1.example:6443', caFingerprint: '11'.repeat(32) };

/** Verdicts the gateway sent on a stream for `account`, in order (Welcome first, then unsolicited ones). */
export function verdictsFor(stream: TestAgentStream, account: string): Verdict[] {
  return stream.received.flatMap((r: ConnectResponse) => {
    if (r.message.case === 'welcome' || r.message.case === 'verdicts')
      return r.message.value.accounts.filter((a) => a.account === account).map((a) => a.verdict);
    return [];
  });
}

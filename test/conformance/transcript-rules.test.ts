/**
 * The transcript rules judge both agents, so they must catch what they claim to: a conforming transcript passes, and
 * each broken rule of the page (sequence, accounts, lists, bookmarks, events, results, Secrets, resume, heartbeats) is
 * reported with its section.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { ConnectRequestSchema, ConnectResponseSchema, Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import type { RequestMessage } from './agent-stream.js';
import type { RecordedStream, TranscriptEntry } from './h2-recorder.js';
import { added, batch, bookmark, cm, marker, SyncPhase } from './scripted.js';
import { checkTranscript } from './transcript-rules.js';

type ResponseMessage = Parameters<typeof create<typeof ConnectResponseSchema>>[1] extends infer I
  ? I extends { message?: infer M }
    ? M
    : never
  : never;

const agent = (message: RequestMessage, at = 0): TranscriptEntry => ({
  dir: 'agent',
  at,
  message: create(ConnectRequestSchema, { message } as never),
});
const gateway = (message: ResponseMessage, at = 0): TranscriptEntry => ({
  dir: 'gateway',
  at,
  message: create(ConnectResponseSchema, { message } as never),
});

function recorded(entries: TranscriptEntry[], endedAt = 1000): RecordedStream {
  return {
    path: '/outpost.agent.v1.AgentService/Connect',
    requestHeaders: {},
    openedAt: 0,
    endedAt,
    entries,
    responseHeaders: {},
    trailersOnly: false,
    trailers: {},
    undecodable: [],
  };
}

const hello = agent({
  case: 'hello',
  value: {
    agentId: 'a',
    accounts: [
      { name: 'acc', apiHost: 'http://k' },
      { name: 'other', apiHost: 'http://k' },
    ],
  },
});
const welcome = (resume: { apiVersion: string; kind: string; resourceVersion: string }[] = []) =>
  gateway({
    case: 'welcome',
    value: {
      sessionId: 's',
      sessionToken: 't',
      heartbeatIntervalSeconds: 1,
      maxUnacked: 8,
      accounts: [
        { account: 'acc', verdict: Verdict.CACHING, resume },
        { account: 'other', verdict: Verdict.REFUSED, reason: 'no' },
      ],
    },
  });
const goodList = [
  agent(marker(1, 'acc', SyncPhase.START)),
  agent(batch(2, [added('acc', cm('a', '1')), added('acc', cm('b', '2'))])),
  agent(marker(3, 'acc', SyncPhase.END, '2', 2)),
];

/** The violations of a one-stream transcript. */
const violations = (entries: TranscriptEntry[], opts = {}, endedAt = 1000) =>
  checkTranscript([recorded(entries, endedAt)], opts).violations;

describe('transcript rules', () => {
  test('a conforming transcript has no violation', () => {
    assert.deepEqual(violations([hello, welcome(), ...goodList, agent(batch(4, [bookmark('acc', '9')]))]), []);
  });

  const broken: [string, TranscriptEntry[], RegExp, object?][] = [
    ['a first message other than Hello', [agent(batch(1, [])), welcome()], /not a Hello/],
    ['a sequence gap', [hello, welcome(), agent(batch(1, [])), agent(batch(3, []))], /sequence 3, expected 2/],
    [
      'data for a REFUSED account',
      [hello, welcome(), agent(batch(1, [added('other', cm('x', '1'))]))],
      /other, which this stream does not cache/,
    ],
    [
      'an END whose count is not the distinct objects',
      [
        hello,
        welcome(),
        agent(marker(1, 'acc', SyncPhase.START)),
        agent(batch(2, [added('acc', cm('a', '1'))])),
        agent(marker(3, 'acc', SyncPhase.END, '2', 2)),
      ],
      /says 2 objects, the list sent 1/,
    ],
    ['an END without START', [hello, welcome(), agent(marker(1, 'acc', SyncPhase.END, '2', 0))], /without a START/],
    [
      'a bookmark carrying an object',
      [hello, welcome(), agent(batch(1, [{ ...bookmark('acc', '5'), name: 'x' }]))],
      /BOOKMARK carries only/,
    ],
    [
      'Secret data in an event',
      [
        hello,
        welcome(),
        agent(
          batch(1, [
            added('acc', {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: 's', namespace: 'd', resourceVersion: '1' },
              data: { p: 'eA==' },
            }),
          ]),
        ),
      ],
      /Secret event carries data/,
    ],
    [
      'a scale answered with the Deployment',
      [
        hello,
        welcome(),
        gateway({
          case: 'operation',
          value: {
            id: 'op',
            account: 'acc',
            spec: { case: 'scale', value: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'd', name: 'web', replicas: 2 } },
          },
        }),
        agent({
          case: 'operationResult',
          value: {
            id: 'op',
            success: true,
            objects: [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'd' } }],
          },
        }),
      ],
      /autoscaling\/v1 Scale/,
    ],
    [
      'a listed scope that had a resume point',
      [hello, welcome([{ apiVersion: 'v1', kind: 'ConfigMap', resourceVersion: '7' }]), ...goodList],
      /listed although the Welcome offered a resume point/,
      { resumeWithoutList: true },
    ],
    [
      'more unacknowledged data than max_unacked',
      [hello, welcome(), ...Array.from({ length: 9 }, (_, i) => agent(batch(i + 1, [])))],
      /more than max_unacked/,
    ],
  ];
  for (const [what, entries, pattern, opts] of broken) {
    test(`reports ${what}`, () => {
      const v = violations(entries, opts);
      assert.ok(
        v.some((x) => pattern.test(x)),
        `expected ${pattern} in ${JSON.stringify(v)}`,
      );
    });
  }

  test('reports a long stream without heartbeats either way', () => {
    const v = violations([hello, { ...welcome(), at: 0 }], {}, 10_000);
    assert.ok(v.some((x) => /no heartbeat from the agent/.test(x)));
    assert.ok(v.some((x) => /no heartbeat from the gateway/.test(x)));
  });
});

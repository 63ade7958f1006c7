/**
 * Agent streams that send well-formed messages in an order or with contents the protocol forbids: data before the
 * Hello, a second Hello, sequence gaps and repeats, a sync END without START, events for accounts the stream does not
 * serve or with identity fields that contradict the object, results and account changes that make no sense, an empty
 * message, and a mutated data message in the middle of a valid conversation. The valid prefix (Hello, acknowledged
 * batches) is the case's own; the refused message must write nothing: the account's objects stay exactly those of
 * the acknowledged batches.
 */
import { create, fromBinary, toBinary, toJson } from '@bufbuild/protobuf';
import { ConnectRequestSchema, EventType, SyncPhase, type ConnectRequest } from '../../../src/gen/outpost/agent/v1/agent_pb.js';
import type { Rng } from '../../../testkit/rng.js';
import { mutateBytes } from '../byte-mutations.js';
import { failure, guarded, type CaseResult, type HostileCase } from '../hostile-case.js';
import { hostileString } from '../hostile-strings.js';
import { SEED, type HostileTarget } from '../hostile-target.js';
import { caseNames, configMapEvent, judgeAgentStream, request, uniqueTag, validHello } from '../agent-messages.js';
import { openRawAgentStream } from '../raw-agent-stream.js';
import { collectStrings } from '../rpc-call.js';

/** A valid batch of the prefix: events on the case's first account. */
interface Batch {
  sequence: number;
  events: { type: EventType; name: string; rv: number }[];
}

/** The hostile step: a message (or payload bytes) and what it is. */
interface Step {
  what: string;
  message: ConnectRequest | Uint8Array;
}

const OBJECT_NAMES = ['o-0', 'o-1', 'o-2', 'o-3'];

function prefixBatches(rng: Rng): Batch[] {
  let rv = 1;
  return Array.from({ length: rng.int(0, 3) }, (_, i) => ({
    sequence: i + 1,
    events: Array.from({ length: rng.int(1, 3) }, () => ({
      type: rng.pick([EventType.ADDED, EventType.MODIFIED, EventType.DELETED]),
      name: rng.pick(OBJECT_NAMES),
      rv: rv++,
    })),
  }));
}

function eventsMessage(account: string, batch: Batch): ConnectRequest {
  return request({
    case: 'events',
    value: { sequence: BigInt(batch.sequence), events: batch.events.map((e) => configMapEvent(account, e.type, e.name, e.rv)) },
  });
}

/** Objects (name → resourceVersion) the acknowledged batches leave. */
function expectedObjects(batches: Batch[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const b of batches) for (const e of b.events) e.type === EventType.DELETED ? out.delete(e.name) : out.set(e.name, String(e.rv));
  return out;
}

function hostileStep(rng: Rng, accounts: string[], next: number): Step {
  const account = accounts[0]!;
  const seq = BigInt(next);
  const event = configMapEvent(account, EventType.ADDED, 'o-hostile', 1000);
  switch (rng.int(0, 12)) {
    case 0:
      return { what: 'a second hello', message: validHello(rng, uniqueTag(rng)) };
    case 1: {
      const wrong = rng.pick([next + rng.int(1, 100), Math.max(0, next - rng.int(1, 3)), 0]);
      return {
        what: `events with sequence ${wrong} (expected ${next})`,
        message: request({ case: 'events', value: { sequence: BigInt(wrong), events: [event] } }),
      };
    }
    case 2:
      return {
        what: 'sync END without START',
        message: request({
          case: 'sync',
          value: { sequence: seq, account, apiVersion: 'v1', kind: 'ConfigMap', phase: SyncPhase.END, resourceVersion: '5', count: 0n },
        }),
      };
    case 3: {
      const phase = rng.pick([SyncPhase.UNSPECIFIED, 7 as SyncPhase]);
      const kind = rng.chance(0.5) ? hostileString(rng) : 'ConfigMap';
      return {
        what: `sync phase ${phase} kind ${JSON.stringify(kind.slice(0, 20))}`,
        message: request({ case: 'sync', value: { sequence: seq, account, apiVersion: 'v1', kind, phase } }),
      };
    }
    case 4: {
      const other = rng.pick([SEED.account, caseNames(uniqueTag(rng), 1).accounts[0]!, hostileString(rng)]);
      return {
        what: `events for account ${JSON.stringify(other.slice(0, 30))} the stream does not serve`,
        message: request({ case: 'events', value: { sequence: seq, events: [{ ...event, account: other }] } }),
      };
    }
    case 5: {
      const text = hostileString(rng);
      const field = rng.pick([
        'type',
        'apiVersion',
        'kind',
        'namespace',
        'name',
        'uid',
        'resourceVersion',
        'objectJson',
        'watchNamespace',
      ] as const);
      const bad =
        field === 'type'
          ? { ...event, type: rng.pick([EventType.UNSPECIFIED, 99 as EventType, EventType.BOOKMARK]) }
          : field === 'objectJson'
            ? {
                ...event,
                objectJson: new TextEncoder().encode(
                  rng.pick([
                    text,
                    '{"metadata":{"name":"o-hostile"}}',
                    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"o-hostile","namespace":"default","resourceVersion":"1000","uid":"x"},"data":{"k":"a\\u0000b"}}',
                    `{"a":${'['.repeat(600)}${']'.repeat(600)}}`,
                  ]),
                ),
              }
            : { ...event, [field]: text };
      return { what: `event with hostile ${field}`, message: request({ case: 'events', value: { sequence: seq, events: [bad] } }) };
    }
    case 6: {
      const id = rng.chance(0.5) ? hostileString(rng) : 'no-such-operation';
      return {
        what: `operation_result for ${JSON.stringify(id.slice(0, 30))}`,
        message: request({
          case: 'operationResult',
          value: { id, account, success: rng.chance(0.5), statusCode: rng.int(-5, 600), message: hostileString(rng) },
        }),
      };
    }
    case 7: {
      const added = validHello(rng, uniqueTag(rng)).message.value as { accounts: { name: string }[] };
      const hostileAdded = added.accounts.map((a) => ({ ...a, name: rng.chance(0.5) ? hostileString(rng) : rng.pick([account, a.name]) }));
      return {
        what: 'accounts_changed with hostile names',
        message: request({
          case: 'accountsChanged',
          value: {
            changeId: BigInt(rng.pick([0, 1, -1 >>> 0])),
            removed: rng.chance(0.5) ? [hostileString(rng), account] : [],
            added: hostileAdded as never,
          },
        }),
      };
    }
    case 8: {
      const info = (validHello(rng, uniqueTag(rng)).message.value as { accounts: object[] }).accounts[0] as { name: string };
      return {
        what: 'account_report for another account',
        message: request({
          case: 'accountReport',
          value: {
            account: { ...info, name: rng.chance(0.5) ? hostileString(rng) : SEED.account } as never,
            progress: [{ apiVersion: hostileString(rng), kind: 'ConfigMap', listed: 5n, done: true }],
          },
        }),
      };
    }
    case 9:
      return { what: 'an empty message', message: create(ConnectRequestSchema, {}) };
    case 10: {
      const base = toBinary(ConnectRequestSchema, request({ case: 'events', value: { sequence: seq, events: [event] } }));
      const m = mutateBytes(rng, base);
      return { what: `events ${m.how}`, message: m.bytes };
    }
    default:
      return {
        what: 'a heartbeat with hostile fields',
        message: request({
          case: 'heartbeat',
          value: { agentId: hostileString(rng), sentAtUnixMs: BigInt(rng.pick([-1, 0, Number.MAX_SAFE_INTEGER])) },
        }),
      };
  }
}

/** Every string inside a message (the names an accepted message may have registered). */
function stringsIn(message: ConnectRequest | Uint8Array): string[] {
  try {
    return collectStrings(
      toJson(ConnectRequestSchema, message instanceof Uint8Array ? fromBinary(ConnectRequestSchema, message) : message),
    );
  } catch {
    return [];
  }
}

function orderCase(rng: Rng): HostileCase {
  const tag = uniqueTag(rng);
  const hello = validHello(rng, tag);
  const { agentId, accounts } = caseNames(tag, (hello.message.value as { accounts: unknown[] }).accounts.length);
  const noHello = rng.chance(0.15);
  const batches = noHello ? [] : prefixBatches(rng);
  const step = noHello
    ? {
        what: 'data before hello',
        message: rng.pick([
          request({ case: 'events', value: { sequence: 1n, events: [configMapEvent(accounts[0]!, EventType.ADDED, 'early', 1)] } }),
          request({ case: 'heartbeat', value: { agentId } }),
          request({ case: 'sync', value: { sequence: 1n, account: accounts[0]!, phase: SyncPhase.START } }),
        ]),
      }
    : hostileStep(rng, accounts, batches.length + 1);
  const name = `${noHello ? '' : `hello + ${batches.length} batch(es), then `}${step.what}`;
  return {
    category: 'agent stream: message order',
    name,
    run: (target: HostileTarget) =>
      guarded(name, async () => {
        const stream = openRawAgentStream(target.grpcUrl);
        try {
          if (!noHello) {
            stream.send(hello);
            const welcome = await stream.next();
            if (welcome?.message.case !== 'welcome')
              return failure(`${name}: expected a welcome, got ${welcome?.message.case ?? 'the end of the stream'}`);
            for (const batch of batches) {
              stream.send(eventsMessage(accounts[0]!, batch));
              for (;;) {
                const res = await stream.next();
                if (!res) return failure(`${name}: the stream ended before batch ${batch.sequence} was acknowledged`);
                if (res.message.case === 'ack' && res.message.value.sequence >= BigInt(batch.sequence)) break;
              }
            }
          }
          stream.send(step.message);
          stream.end();
          const reply = await stream.finished();
          const result: CaseResult = judgeAgentStream(reply, noHello ? [] : [toBinary(ConnectRequestSchema, hello)], name);
          if (result.verdict.kind === 'accepted') return { ...result, owned: [...(result.owned ?? []), ...stringsIn(step.message)] };
          if (result.verdict.kind === 'typed' && !noHello)
            return checkObjects(target, accounts[0]!, expectedObjects(batches), name, result);
          return result;
        } finally {
          stream.destroy();
        }
      }),
  };
}

/** The refused message wrote nothing: the account holds exactly the acknowledged batches' objects. */
async function checkObjects(
  target: HostileTarget,
  account: string,
  expected: Map<string, string>,
  name: string,
  result: CaseResult,
): Promise<CaseResult> {
  const rows = await target.query<{ name: string; rv: string }>(
    `select name, resource_version as rv from objects where account = '${account}' order by name`,
  );
  const actual = new Map(rows.map((r) => [r.name, r.rv]));
  const same = actual.size === expected.size && [...expected].every(([k, v]) => actual.get(k) === v);
  if (!same)
    return failure(
      `${name}: refused, but the account's objects are ${JSON.stringify([...actual])}, expected ${JSON.stringify([...expected])}`,
    );
  return result;
}

/** Case factory of the message-order category. */
export const AGENT_STREAM_ORDER_CASES = { 'agent stream: message order': orderCase };

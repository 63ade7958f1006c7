/**
 * The page's rules as checks over a recorded transcript ({@link RecordedStream}s of one agent): what any agent —
 * the mini agent or Outpost's own — must have sent, judged only from the wire. Each violation names the stream, the
 * message and the page section it breaks, so one list tells everything an agent did wrong.
 */
import type { JsonObject } from '@bufbuild/protobuf';
import {
  EventType,
  SyncPhase,
  Verdict,
  type AccountsChanged,
  type ConnectRequest,
  type Event,
  type Welcome,
} from '../../src/gen/outpost/agent/v1/agent_pb.js';
import type { Operation, OperationResult } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import type { RecordedStream } from './h2-recorder.js';

/** Options of {@link checkTranscript}. */
export interface TranscriptRuleOptions {
  /**
   * Scopes offered a resume point must not be listed on that stream (section 5). Off for runs where the cluster may
   * answer a watch with 410 Gone (then a list is right).
   */
  resumeWithoutList?: boolean;
}

/** What a transcript showed, for scenario assertions beyond the rules. */
export interface TranscriptSummary {
  /** Per stream: scopes listed (START sent), `account/apiVersion/kind/namespace`. */
  listed: string[][];
  /** Per stream: scopes the Welcome offered a resume point for. */
  offered: string[][];
  /** Bookmarks sent, per stream. */
  bookmarks: Event[][];
  /** Heartbeats the agent sent, per stream. */
  agentHeartbeats: number[];
  /** Heartbeats the gateway sent, per stream. */
  gatewayHeartbeats: number[];
  /** Results the agent sent, with the operation they answer. */
  results: { op?: Operation; result: OperationResult }[];
  /** Welcomes, per stream (undefined when none came). */
  welcomes: (Welcome | undefined)[];
}

const scopeKey = (account: string, apiVersion: string, kind: string, ns: string) => `${account}/${apiVersion}/${kind}/${ns}`;
const decoder = new TextDecoder('utf-8', { fatal: true });
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Section 8: a v1 Secret never carries data, stringData or the last-applied annotation. */
function secretLeak(obj: Record<string, any>): string | undefined {
  if (obj.apiVersion !== 'v1' || obj.kind !== 'Secret') return undefined;
  if (obj.data !== undefined) return 'data';
  if (obj.stringData !== undefined) return 'stringData';
  if (obj.metadata?.annotations?.[LAST_APPLIED] !== undefined) return `the ${LAST_APPLIED} annotation`;
  return undefined;
}

/** Section 4: what is wrong with one event, or undefined. */
function eventProblem(e: Event): string | undefined {
  if (!e.apiVersion || !e.kind || !e.resourceVersion) return 'api_version, kind and resource_version must be set';
  if (e.type === EventType.BOOKMARK) {
    if (e.name || e.namespace || e.uid || e.objectJson.length > 0)
      return 'a BOOKMARK carries only account, api_version, kind, watch_namespace and resource_version';
    return undefined;
  }
  if (![EventType.ADDED, EventType.MODIFIED, EventType.DELETED].includes(e.type))
    return `type ${e.type} is not ADDED, MODIFIED, DELETED or BOOKMARK`;
  if (!e.name) return `${EventType[e.type]} must name the object`;
  if (e.objectJson.length === 0) return e.type === EventType.DELETED ? undefined : `${EventType[e.type]} must carry object_json`;
  let obj: unknown;
  try {
    obj = JSON.parse(decoder.decode(e.objectJson));
  } catch {
    return 'object_json is not UTF-8 JSON';
  }
  if (!isObject(obj) || !isObject(obj.metadata)) return 'object_json must be a JSON object with metadata';
  const md = obj.metadata;
  if (obj.apiVersion !== undefined && obj.apiVersion !== e.apiVersion)
    return `apiVersion ${obj.apiVersion} is not the event's ${e.apiVersion}`;
  if (obj.kind !== undefined && obj.kind !== e.kind) return `kind ${obj.kind} is not the event's ${e.kind}`;
  if (md.name !== e.name) return `metadata.name ${md.name} is not the event's ${e.name}`;
  if ((md.namespace ?? '') !== e.namespace) return `metadata.namespace ${md.namespace} is not the event's ${e.namespace}`;
  if ((md.uid || e.uid) && md.uid !== e.uid) return `metadata.uid ${md.uid} is not the event's ${e.uid}`;
  if (md.resourceVersion !== undefined && md.resourceVersion !== e.resourceVersion)
    return `metadata.resourceVersion ${md.resourceVersion} is not the event's ${e.resourceVersion}`;
  if (md.labels !== undefined && (!isObject(md.labels) || Object.values(md.labels).some((v) => typeof v !== 'string')))
    return 'metadata.labels must map strings to strings';
  const leak = secretLeak({ apiVersion: e.apiVersion, kind: e.kind, ...obj });
  if (leak) return `a Secret event carries ${leak} (section 8)`;
  return undefined;
}

const hasObjectIdentity = (o: JsonObject) =>
  typeof o.apiVersion === 'string' && typeof o.kind === 'string' && isObject(o.metadata) && typeof (o.metadata as any).name === 'string';

/** Section 7's per-type table: what is wrong with a result for this operation, or undefined. */
function resultProblem(op: Operation | undefined, r: OperationResult): string | undefined {
  if (!op) return `result ${r.id} answers no operation this agent received`;
  if (r.account && r.account !== op.account) return `account ${r.account} is not the operation's ${op.account}`;
  for (const o of r.objects) {
    if (!hasObjectIdentity(o)) return 'every object names apiVersion, kind and metadata.name';
    const leak = secretLeak(o as Record<string, any>);
    if (leak) return `a Secret in the result carries ${leak} (section 8)`;
  }
  const type = op.spec.case;
  if (!r.success) {
    if (!r.reason) return 'a failure sets reason';
    if (r.objects.length > 0 && type !== 'apply') return 'only a failed apply may carry objects';
    return undefined;
  }
  const only = (...fields: ('objects' | 'deleted' | 'logs' | 'revisions')[]) => {
    const set = { objects: r.objects.length > 0, deleted: r.deleted.length > 0, logs: r.logs !== '', revisions: r.revisions.length > 0 };
    const extra = (Object.keys(set) as (keyof typeof set)[]).filter((k) => set[k] && !fields.includes(k));
    return extra.length ? `a ${type} result must leave ${extra.join(', ')} empty` : undefined;
  };
  const target = (o: JsonObject, s: { kind: string; name: string; namespace: string }) =>
    o.kind === s.kind && (o.metadata as any).name === s.name && ((o.metadata as any).namespace ?? '') === (s.namespace ?? '');
  switch (type) {
    case 'get':
    case 'patch':
    case 'rollout':
      if (r.objects.length !== 1 || !target(r.objects[0]!, op.spec.value)) return `a ${type} result holds exactly the target object`;
      return only('objects');
    case 'scale': {
      const o = r.objects[0];
      if (
        r.objects.length !== 1 ||
        o?.apiVersion !== 'autoscaling/v1' ||
        o.kind !== 'Scale' ||
        (o.metadata as any).name !== op.spec.value.name
      )
        return 'a scale result holds exactly the autoscaling/v1 Scale of the target';
      return only('objects');
    }
    case 'apply':
      if (r.objects.length === 0) return 'an apply result holds at least one object';
      return only('objects');
    case 'delete':
      if (op.spec.value.name) {
        const ns = op.spec.value.namespace;
        const want = [`${op.spec.value.kind}/${ns}/${op.spec.value.name}`, `${op.spec.value.kind}/${op.spec.value.name}`];
        if (r.deleted.length !== 1 || !want.includes(r.deleted[0]!))
          return `a delete by name holds exactly ${want[0]} in deleted, got ${JSON.stringify(r.deleted)}`;
      }
      return only('deleted');
    case 'list':
      if (op.spec.value.limit > 0 && r.objects.length > op.spec.value.limit) return 'a list result holds no more than limit items';
      return only('objects');
    case 'logs':
      return only('logs');
    case 'history': {
      const nums = r.revisions.map((v) => Number(v.revision));
      if (nums.some((n, i) => n < 1 || (i > 0 && n <= nums[i - 1]!))) return 'history revisions are numbered from 1, strictly increasing';
      return only('revisions');
    }
    default:
      return `unknown operation type ${String(type)}`;
  }
}

/**
 * Checks every recorded stream against the page; returns the violations (empty when the agent followed every rule)
 * and a summary for scenario assertions.
 */
export function checkTranscript(
  streams: RecordedStream[],
  options: TranscriptRuleOptions = {},
): { violations: string[]; summary: TranscriptSummary } {
  const violations: string[] = [];
  const summary: TranscriptSummary = {
    listed: [],
    offered: [],
    bookmarks: [],
    agentHeartbeats: [],
    gatewayHeartbeats: [],
    results: [],
    welcomes: [],
  };
  const operations = new Map<string, Operation>();
  streams.forEach((s, i) => {
    const where = (what: string) => `stream ${i + 1}: ${what}`;
    const v = (what: string) => violations.push(where(what));
    for (const u of s.undecodable) v(`a message did not decode: ${u}`);
    let welcome: Welcome | undefined;
    let expectedSeq = 1n;
    let ackSeen = 0n;
    const caching = new Set<string>();
    const everCaching = new Set<string>();
    const helloAccounts: string[] = [];
    const changes = new Map<bigint, AccountsChanged>();
    const open = new Map<string, Set<string>>();
    const offered = new Set<string>();
    const listed: string[] = [];
    const bookmarks: Event[] = [];
    let agentHeartbeats = 0;
    let gatewayHeartbeats = 0;
    let agentMessages = 0;
    let welcomeAt: number | undefined;
    let lastAgentAt: number | undefined;
    for (const entry of s.entries) {
      if (entry.dir === 'gateway') {
        const m = entry.message.message;
        if (m.case === 'welcome') {
          if (welcome) v('a second Welcome');
          welcome = m.value;
          welcomeAt = entry.at;
          m.value.accounts.forEach((verdict, k) => {
            if (verdict.account !== helloAccounts[k])
              v(`verdict ${k} names ${verdict.account}, the Hello's account ${k} is ${helloAccounts[k]} (section 2: in the Hello's order)`);
            if (verdict.verdict === Verdict.CACHING) {
              caching.add(verdict.account);
              everCaching.add(verdict.account);
              for (const p of verdict.resume) offered.add(scopeKey(verdict.account, p.apiVersion, p.kind, p.watchNamespace));
            }
          });
        } else if (m.case === 'ack') {
          if (m.value.sequence > ackSeen) ackSeen = m.value.sequence;
        } else if (m.case === 'heartbeat') {
          gatewayHeartbeats++;
        } else if (m.case === 'operation') {
          operations.set(m.value.id, m.value);
        } else if (m.case === 'verdicts') {
          for (const verdict of m.value.accounts) {
            if (verdict.verdict === Verdict.CACHING) {
              caching.add(verdict.account);
              everCaching.add(verdict.account);
              for (const p of verdict.resume) offered.add(scopeKey(verdict.account, p.apiVersion, p.kind, p.watchNamespace));
            } else caching.delete(verdict.account);
          }
        } else if (!welcome) {
          v(`the gateway sent ${m.case} before the Welcome`);
        }
        continue;
      }
      const req: ConnectRequest = entry.message;
      const m = req.message;
      agentMessages++;
      if (lastAgentAt !== undefined && welcomeAt !== undefined && entry.at - lastAgentAt > 30_000)
        v('the agent was silent for more than 30 s');
      lastAgentAt = entry.at;
      if (agentMessages === 1) {
        if (m.case !== 'hello') v(`the first message is ${m.case}, not a Hello (section 2)`);
        else helloAccounts.push(...m.value.accounts.map((a) => a.name));
        continue;
      }
      switch (m.case) {
        case 'hello':
          v('a second Hello (section 2)');
          break;
        case 'heartbeat':
          agentHeartbeats++;
          break;
        case 'accountsChanged':
          changes.set(m.value.changeId, m.value);
          for (const name of m.value.removed) caching.delete(name);
          break;
        case 'operationResult': {
          const op = operations.get(m.value.id);
          summary.results.push({ op, result: m.value });
          const p = resultProblem(op, m.value);
          if (p) v(`result ${m.value.id}: ${p} (section 7)`);
          break;
        }
        case 'accountReport':
          if (m.value.account && !caching.has(m.value.account.name) && !everCaching.has(m.value.account.name))
            v(`an AccountReport for ${m.value.account.name}, which this stream does not cache (section 3)`);
          break;
        case 'events':
        case 'sync': {
          const seq = m.value.sequence;
          if (seq !== expectedSeq) v(`data sequence ${seq}, expected ${expectedSeq} (section 3)`);
          expectedSeq = seq + 1n;
          if (welcome && seq - ackSeen > BigInt(welcome.maxUnacked))
            v(`${seq - ackSeen} data messages unacknowledged, more than max_unacked ${welcome.maxUnacked} (section 3, advisory)`);
          if (m.case === 'sync') {
            const mk = m.value;
            const key = scopeKey(mk.account, mk.apiVersion, mk.kind, mk.watchNamespace);
            if (!everCaching.has(mk.account)) v(`sync marker ${seq} for ${mk.account}, which this stream does not cache (section 3)`);
            if (!mk.apiVersion || !mk.kind) v(`sync marker ${seq} without api_version / kind (section 5)`);
            if (mk.phase === SyncPhase.START) {
              open.set(key, new Set());
              listed.push(key);
              if (options.resumeWithoutList && offered.has(key))
                v(`${key} was listed although the Welcome offered a resume point (section 5)`);
            } else if (mk.phase === SyncPhase.END) {
              const seen = open.get(key);
              if (!seen) v(`END for ${key} without a START (section 5)`);
              if (!mk.resourceVersion) v(`END for ${key} without resource_version (section 5)`);
              if (seen && BigInt(seen.size) !== mk.count)
                v(`END for ${key} says ${mk.count} objects, the list sent ${seen.size} distinct ones (section 5)`);
              open.delete(key);
            } else v(`sync marker ${seq} with phase ${mk.phase} (section 5)`);
          } else {
            for (const e of m.value.events) {
              if (!everCaching.has(e.account)) v(`event for ${e.account}, which this stream does not cache (section 3)`);
              const p = eventProblem(e);
              if (p) v(`event ${e.kind} ${e.namespace}/${e.name} in batch ${seq}: ${p} (section 4)`);
              const key = scopeKey(e.account, e.apiVersion, e.kind, e.watchNamespace);
              if (e.type === EventType.BOOKMARK) bookmarks.push(e);
              const listing = open.get(key);
              // Between START and END a list sends its objects as ADDED (section 5); the page does not say whether a
              // bookmark of the scope may come in between, so bookmarks are let through.
              if (listing && e.type !== EventType.BOOKMARK) {
                if (e.type === EventType.ADDED) listing.add(`${e.namespace}/${e.name}`);
                else v(`${EventType[e.type]} for ${key} between START and END (section 5: a list sends every object as ADDED)`);
              }
            }
          }
          break;
        }
        case undefined:
          v('an empty ConnectRequest (section 9, E13)');
          break;
        default:
          break;
      }
    }
    // Heartbeats flow (section 6): a stream that lived well past three intervals after its Welcome saw them both ways.
    const end = s.endedAt ?? Date.now();
    if (welcome && welcomeAt !== undefined) {
      const interval = Math.max(1, welcome.heartbeatIntervalSeconds) * 1000;
      if (end - welcomeAt > 4 * interval) {
        if (agentHeartbeats === 0) v(`no heartbeat from the agent in ${end - welcomeAt} ms (interval ${interval} ms, section 6)`);
        if (gatewayHeartbeats === 0) v(`no heartbeat from the gateway in ${end - welcomeAt} ms (interval ${interval} ms, section 6)`);
      }
    }
    summary.listed.push(listed);
    summary.offered.push([...offered]);
    summary.bookmarks.push(bookmarks);
    summary.agentHeartbeats.push(agentHeartbeats);
    summary.gatewayHeartbeats.push(gatewayHeartbeats);
    summary.welcomes.push(welcome);
  });
  return { violations, summary };
}

/** Data messages the agent sent on a recorded stream that the gateway has not acknowledged (yet). */
export function unacknowledged(s: RecordedStream): bigint {
  let sent = 0n;
  let acked = 0n;
  for (const e of s.entries) {
    const m = e.message.message;
    if (e.dir === 'agent' && (m.case === 'events' || m.case === 'sync')) sent = m.value.sequence > sent ? m.value.sequence : sent;
    if (e.dir === 'gateway' && m.case === 'ack') acked = m.value.sequence > acked ? m.value.sequence : acked;
  }
  return sent > acked ? sent - acked : 0n;
}

/** The events (bookmarks excluded) and bookmarks an agent sent for an account on the given streams. */
export function countEvents(streams: RecordedStream[], account: string): { changes: number; bookmarks: Event[] } {
  let changes = 0;
  const bookmarks: Event[] = [];
  for (const s of streams) {
    for (const e of s.entries) {
      const m = e.message.message;
      if (e.dir !== 'agent' || m.case !== 'events') continue;
      for (const ev of m.value.events) {
        if (ev.account !== account) continue;
        if (ev.type === EventType.BOOKMARK) bookmarks.push(ev);
        else changes++;
      }
    }
  }
  return { changes, bookmarks };
}

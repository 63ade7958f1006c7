/**
 * Live reads of a cluster for the Clouddriver API, as Clouddriver does them (it reads manifests and jobs from the API
 * server, not its cache): each is an Outpost `get`, `list` or `logs` through the account's agent, so a read is never
 * older than a write Outpost made before it. A missing object is `undefined`; any other failure is a 503 naming the
 * cause (Orca retries such errors). Reads of a route are never stored ({@link readsOf}, read-runner.ts: Orca polls
 * them); reads a task makes as a step of a change use the task's calls (stored operations `<task id>-<n>`, in its
 * history).
 */
import { create } from '@bufbuild/protobuf';
import { GetSpecSchema, ListSpecSchema, LogsSpecSchema } from '../../gen/outpost/agent/v1/operation_pb.js';
import { HttpError } from '../http/errors.js';
import type { ReadCaller, ReadRequest, ReadRow, ReadRunner } from '../operations/read-runner.js';
import { AgentCallError, callResultOf, type AgentCalls, type CallSpec } from './agent-calls.js';
import { asKubernetesObject, type KubernetesObject } from './manifest-types.js';

/** Time a read may take. */
const READ_TIMEOUT_MS = 20_000;

/** See the module comment. */
export interface LiveReads {
  get(account: string, kind: string, namespace: string, name: string): Promise<KubernetesObject | undefined>;
  list(
    account: string,
    kind: string,
    namespace: string,
    selectors?: { labelSelector?: string; fieldSelector?: string },
  ): Promise<KubernetesObject[]>;
  /** Throws an AgentCallError when the cluster refuses (no such pod or container). */
  logs(account: string, namespace: string, pod: string, container?: string): Promise<string>;
}

/** Told about every read a route ran (the audit log, with `audit.reads`). */
export type ReadListener = (account: string, spec: CallSpec, row: ReadRow, startedAt: Date) => void;

/**
 * Reads of one route request (read-runner.ts: never stored), as `caller` — whom the replica holding the account's
 * stream admits again — recorded as `requestedBy`; each is told to `onRead` when given.
 */
export function readsOf(runner: Pick<ReadRunner, 'run'>, caller: ReadCaller, requestedBy: string, onRead?: ReadListener): LiveReads {
  return createLiveReads(() => ({
    async run(account, spec, timeoutMs = READ_TIMEOUT_MS) {
      const startedAt = new Date();
      const row = await runner.run({ account, spec: spec as ReadRequest['spec'], timeoutMs, requestedBy }, caller);
      onRead?.(account, spec, row, startedAt);
      return callResultOf(row);
    },
  }));
}

/** Creates reads whose operations go through `calls()` (called once per read). */
export function createLiveReads(calls: () => AgentCalls): LiveReads {
  /** Runs a read: a Kubernetes 4xx stays an AgentCallError (the caller decides), anything else unreachable is a 503. */
  const call = async (account: string, spec: CallSpec) => {
    try {
      return await calls().run(account, spec, READ_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof AgentCallError && err.statusCode >= 400 && err.statusCode < 500) throw err;
      if (err instanceof AgentCallError)
        throw new HttpError(503, 'Service Unavailable', `could not read from account ${account}: ${err.message}`);
      throw err;
    }
  };
  /** A refusal of the cluster other than 404 (RBAC, a bad selector) as the route's error. */
  const refused = (err: unknown): never => {
    if (err instanceof AgentCallError) {
      const status = err.statusCode === 401 || err.statusCode === 403 ? 403 : err.statusCode === 409 ? 409 : 400;
      throw new HttpError(
        status,
        status === 403 ? 'Forbidden' : status === 409 ? 'Conflict' : 'Bad Request',
        `the cluster refused the read: ${err.message}`,
      );
    }
    throw err;
  };
  return {
    async get(account, kind, namespace, name) {
      try {
        const { objects } = await call(account, { case: 'get', value: create(GetSpecSchema, { kind, namespace, name }) });
        return objects[0] ? asKubernetesObject(objects[0]) : undefined;
      } catch (err) {
        if (err instanceof AgentCallError && err.statusCode === 404) return undefined;
        return refused(err);
      }
    },
    async list(account, kind, namespace, selectors = {}) {
      try {
        const { objects } = await call(account, {
          case: 'list',
          value: create(ListSpecSchema, {
            kind,
            namespace,
            labelSelector: selectors.labelSelector ?? '',
            fieldSelector: selectors.fieldSelector ?? '',
          }),
        });
        return objects.map(asKubernetesObject);
      } catch (err) {
        if (err instanceof AgentCallError && err.statusCode === 404) return [];
        return refused(err);
      }
    },
    async logs(account, namespace, pod, container) {
      const { result } = await call(account, {
        case: 'logs',
        value: create(LogsSpecSchema, { namespace, pod, container: container ?? '' }),
      });
      return result.logs;
    },
  };
}

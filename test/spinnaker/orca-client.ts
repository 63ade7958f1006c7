/**
 * Orca's side of the Clouddriver API, as its sources describe it, for the end-to-end suite: submit an operations array
 * with a `clientRequestId` (retried on retryable errors like `KatoService`), monitor the task as `MonitorKatoTask`
 * does (404 → keep polling, up to 30 in a row; `failed` → TERMINAL; `completed` → SUCCEEDED unless results are
 * expected and absent), and wait for manifests as `WaitForManifestStableTask` does (any error → not yet; `failed` →
 * TERMINAL with its message; `stable` → done). Polls are quicker than Orca's (the sandbox is fast), and waits only
 * bound a hang.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

export type Obj = Record<string, any>;

/** What MonitorKatoTask concluded. */
interface TaskOutcome {
  status: 'SUCCEEDED' | 'TERMINAL';
  task: Obj;
  /** The first EXCEPTION result object, as Orca attaches it to `kato.tasks`. */
  exception?: Obj;
  /** From the first result object that has them, as PromoteManifestKatoOutputsTask reads them. */
  outputs: { manifestNamesByNamespace?: Record<string, string[]>; manifests?: Obj[]; createdArtifacts?: Obj[]; boundArtifacts?: Obj[] };
}

/** A client playing Orca against one gateway base URL. */
export interface OrcaClient {
  baseUrl: string;
  headers: Record<string, string>;
  /** POST /kubernetes/ops; returns the HTTP status and body (no retries). */
  post(ops: Obj[], clientRequestId?: string, path?: string): Promise<{ status: number; body: Obj }>;
  /** Submits and returns the task id, failing the test on a non-200. */
  submit(ops: Obj[], clientRequestId?: string): Promise<string>;
  /** MonitorKatoTask until SUCCEEDED or TERMINAL. */
  monitor(taskId: string, resultExpected: boolean): Promise<TaskOutcome>;
  /** submit + monitor. */
  run(op: string, description: Obj, resultExpected: boolean, clientRequestId?: string): Promise<TaskOutcome>;
  /** GET a manifest (`includeEvents=false` unless asked). */
  manifest(account: string, location: string, name: string, includeEvents?: boolean): Promise<{ status: number; body: Obj }>;
  /** WaitForManifestStableTask for every name in `namesByNamespace`. */
  waitStable(
    account: string,
    namesByNamespace: Record<string, string[]>,
    timeoutMs?: number,
  ): Promise<{ status: 'SUCCEEDED' | 'TERMINAL'; messages: string[] }>;
  get(path: string): Promise<{ status: number; body: Obj }>;
  /**
   * Polls a read (Deck's views follow the cluster through the agent and the cache) until it answers 200 with a body
   * `ready` accepts, and returns that body; the deadline only bounds a hang.
   */
  until(path: string, ready: (body: Obj) => boolean): Promise<Obj>;
}

/** Creates the client; `headers` go on every request (credentials, X-SPINNAKER-*). */
export function createOrcaClient(baseUrl: string, headers: Record<string, string> = {}, pollMs = 20): OrcaClient {
  const request = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: Obj = {};
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      parsed = { raw: text };
    }
    return { status: res.status, body: parsed };
  };
  const client: OrcaClient = {
    baseUrl,
    headers,
    post: (ops, clientRequestId, path = '/kubernetes/ops') =>
      request('POST', `${path}${clientRequestId ? `?clientRequestId=${encodeURIComponent(clientRequestId)}` : ''}`, ops),
    async submit(ops, clientRequestId) {
      for (let attempt = 1; ; attempt++) {
        const res = await client.post(ops, clientRequestId);
        if (res.status === 200) {
          assert.equal(typeof res.body.id, 'string');
          assert.equal(res.body.resourceUri, `/task/${res.body.id}`);
          return res.body.id as string;
        }
        // KatoService retries retryable errors (not 400/404) three times.
        if (res.status === 400 || res.status === 404 || attempt >= 3)
          assert.fail(`submission failed: ${res.status} ${JSON.stringify(res.body)}`);
        await sleep(pollMs);
      }
    },
    async monitor(taskId, resultExpected) {
      let notFound = 0;
      const deadline = Date.now() + 120_000;
      for (;;) {
        assert.ok(Date.now() < deadline, `task ${taskId} did not finish in time`);
        const res = await request('GET', `/task/${taskId}`);
        if (res.status === 404) {
          notFound++;
          assert.ok(notFound < 30, `task ${taskId} not found 30 times in a row`);
        } else {
          assert.equal(res.status, 200, `GET /task/${taskId}: ${JSON.stringify(res.body)}`);
          notFound = 0;
          const task = res.body;
          assert.equal(task.status.retryable, false, 'Outpost never asks Orca to resume a task');
          const results: Obj[] = task.resultObjects ?? [];
          const exception = results.find((r) => r.type === 'EXCEPTION');
          const withOutputs = results.find((r) => r.manifestNamesByNamespace) ?? {};
          const outcome = (status: TaskOutcome['status']): TaskOutcome => ({ status, task, exception, outputs: withOutputs });
          if (task.status.failed) return outcome('TERMINAL');
          if (task.status.completed && !(resultExpected && results.length === 0)) return outcome('SUCCEEDED');
        }
        await sleep(pollMs);
      }
    },
    async run(op, description, resultExpected, clientRequestId) {
      return client.monitor(await client.submit([{ [op]: description }], clientRequestId), resultExpected);
    },
    manifest: (account, location, name, includeEvents = false) =>
      request(
        'GET',
        `/manifests/${encodeURIComponent(account)}/${encodeURIComponent(location || '_')}/${encodeURIComponent(name)}?includeEvents=${includeEvents}`,
      ),
    async waitStable(account, namesByNamespace, timeoutMs = 120_000) {
      const settled = new Map<string, string | null>();
      const messages: string[] = [];
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        let incomplete = false;
        for (const [location, names] of Object.entries(namesByNamespace)) {
          for (const name of names) {
            const key = `${location}/${name}`;
            if (settled.has(key)) continue;
            const res = await client.manifest(account, location, name);
            if (res.status !== 200) {
              incomplete = true;
              continue;
            }
            const status = res.body.status;
            assert.ok(Array.isArray(res.body.warnings), 'warnings is a list');
            if (status?.failed?.state) {
              const message = `'${name}' in '${location}' for account ${account}: ${status.failed.message}`;
              settled.set(key, message);
              messages.push(message);
            } else if (status?.stable?.state) settled.set(key, null);
            else incomplete = true;
          }
        }
        if (!incomplete) return { status: messages.length ? 'TERMINAL' : 'SUCCEEDED', messages };
        assert.ok(Date.now() < deadline, `manifests not stable in time: ${JSON.stringify(namesByNamespace)}`);
        await sleep(pollMs);
      }
    },
    get: (path) => request('GET', path),
    async until(path, ready) {
      let last: unknown;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(50)) {
        const res = await request('GET', path);
        last = res.body;
        if (res.status === 200 && ready(res.body)) return res.body;
      }
      assert.fail(`${path} never became ready: ${JSON.stringify(last)}`);
    },
  };
  return client;
}

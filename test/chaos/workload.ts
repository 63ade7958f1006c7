/**
 * The chaos suite's continuous load: cluster changes straight into the sandbox (ConfigMaps created, updated and
 * deleted; Secrets whose data, stringData and last-applied annotation carry a marker that must never leave the
 * agent), and operations through the gateways. Every operation appends its own id to one ConfigMap's finalizers with
 * a JSON patch, so the ledger shows whether it took effect, and how many times.
 */
import type { Sandbox } from '../../src/sandbox/index.js';
import type { Rng } from '../../testkit/rng.js';

/** One submitted operation and what is known about it. */
export interface LedgerOperation {
  id: string;
  /** Replica that last answered for it. */
  gateway: string;
  /** SUCCEEDED, FAILED, TIMED_OUT; PENDING/SENT while not terminal; UNKNOWN before any replica answered. */
  state: string;
  error?: string;
}

/** What the workload needs from the system. */
export interface WorkloadTarget {
  sandbox: Sandbox;
  namespace: string;
  account: string;
  /** HTTP URLs of the gateways that run now (the workload spreads its operations over them). */
  liveGateways(): { name: string; httpUrl: string }[];
}

/** The running load. */
export interface Workload {
  /** Starts both loops (again after {@link stop}). */
  start(): void;
  /** Stops both loops and waits for the operation in flight (whose submission keeps retrying until answered or given up). */
  stop(): Promise<void>;
  /** Every operation submitted so far, in order. */
  readonly operations: LedgerOperation[];
  /** Cluster changes made so far. */
  readonly changes: number;
}

/** The ConfigMap whose finalizers are the operations' ledger. */
export const LEDGER = 'ledger';
/** Finalizer prefix of ledger entries. */
export const LEDGER_PREFIX = 'outpost.test/op-';
const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT']);

/** Creates the ledger ConfigMap and the load (not started). `marker` goes into every Secret. */
export function createWorkload(target: WorkloadTarget, rng: Rng, marker: string): Workload {
  const { sandbox, namespace } = target;
  const store = sandbox.store;
  if (!store.get('v1', 'ConfigMap', namespace, LEDGER)) {
    store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: LEDGER, namespace, finalizers: ['outpost.test/base'] },
      data: {},
    });
  }
  const operations: LedgerOperation[] = [];
  let changes = 0;
  let running = false;
  let loops: Promise<void>[] = [];
  let opSeq = 0;
  const changeRng = rng.fork('changes');
  const opRng = rng.fork('operations');

  const change = () => {
    const name = `cm-${changeRng.int(0, 59)}`;
    const existing = store.get('v1', 'ConfigMap', namespace, name);
    const roll = changeRng.next();
    try {
      if (roll < 0.1) {
        const secret = `secret-${changeRng.int(0, 9)}`;
        const body = {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: secret,
            namespace,
            annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ stringData: { token: marker } }) },
          },
          type: 'Opaque',
          data: { token: Buffer.from(`${marker}-${changes}`).toString('base64') },
          stringData: { plain: `${marker}-plain` },
        };
        if (store.get('v1', 'Secret', namespace, secret)) store.update(body);
        else store.create(body);
      } else if (!existing || roll < 0.4) {
        if (existing) store.remove('v1', 'ConfigMap', namespace, name);
        else
          store.create({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, namespace, labels: { chaos: 'yes' } },
            data: { n: String(changes) },
          });
      } else {
        store.update({ ...existing, metadata: { ...existing.metadata, resourceVersion: undefined }, data: { n: String(changes) } });
      }
      changes++;
    } catch {
      // a conflict with a controller is fine: the next change comes soon
    }
  };

  /** Submits `op` (wait) to live replicas in turn until one answers with a state, or `deadline` passes. */
  const submit = async (op: LedgerOperation, deadline: number) => {
    const patch = JSON.stringify([{ op: 'add', path: '/metadata/finalizers/-', value: `${LEDGER_PREFIX}${op.id}` }]);
    const body = JSON.stringify({
      id: op.id,
      account: target.account,
      wait: true,
      timeout: '6s',
      patch: { apiVersion: 'v1', kind: 'ConfigMap', namespace, name: LEDGER, type: 'PATCH_TYPE_JSON', patch },
    });
    while (Date.now() < deadline) {
      const live = target.liveGateways();
      if (live.length === 0) {
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      const gateway = opRng.pick(live);
      try {
        const res = await fetch(`${gateway.httpUrl}/outpost.api.v1.OperationService/SubmitOperation`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(12_000),
        });
        const json = (await res.json()) as { operation?: { state: string; error?: string }; code?: string };
        if (res.ok && json.operation) {
          op.gateway = gateway.name;
          op.state = json.operation.state.replace(/^OPERATION_STATE_/, '');
          op.error = json.operation.error;
          if (TERMINAL.has(op.state)) return;
        }
      } catch {
        // the replica died or the request timed out: the same id goes to another replica
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  const changeLoop = async () => {
    while (running) {
      change();
      await new Promise((r) => setTimeout(r, changeRng.int(20, 80)));
    }
  };
  const operationLoop = async () => {
    while (running) {
      const op: LedgerOperation = { id: `${rng.seed.toString(36)}-${++opSeq}`, gateway: '', state: 'UNKNOWN' };
      operations.push(op);
      await submit(op, Date.now() + 30_000);
      await new Promise((r) => setTimeout(r, opRng.int(50, 250)));
    }
  };

  return {
    start() {
      if (running) return;
      running = true;
      loops = [changeLoop(), operationLoop()];
    },
    async stop() {
      running = false;
      await Promise.all(loops);
      loops = [];
    },
    operations,
    get changes() {
      return changes;
    },
  };
}

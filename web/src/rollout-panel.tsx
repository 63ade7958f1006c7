import type { MessageInitShape } from '@bufbuild/protobuf';
import { useState } from 'preact/hooks';
import { RolloutAction } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import type { SubmitOperationRequestSchema } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { formatLocalMs } from './format.js';
import { ErrorMessage } from './error-message.js';
import { accountsSignal } from './fleet-signals.js';
import { objectTitle } from './object-href.js';
import { OutcomeText } from './operation-form.js';
import { holderKind, revisionsOf, selectorOf } from './rollout-revisions.js';
import { useServices } from './services.js';
import { TableScroll } from './table-scroll.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';
import { useOperationRun } from './use-operation-run.js';

/** Holders read per workload; Kubernetes keeps 10 old revisions by default. */
const MAX_HOLDERS = 1000;

type Request = MessageInitShape<typeof SubmitOperationRequestSchema>;

/** An action waiting for the user's confirmation. */
interface Pending {
  question: string;
  confirm: string;
  request: Request;
}

/**
 * The region "Rollout" of a Deployment's, StatefulSet's or DaemonSet's page: its revision history and the
 * `kubectl rollout` actions as rollout operations — undo to a chosen revision and restart (both confirmed first),
 * pause or resume (Deployments, by spec.paused) — with the outcome followed live in the status "Rollout result".
 *
 * The history is read from the cache (the ReplicaSets or ControllerRevisions the workload controls), not with a
 * history operation: it then follows the cluster like the rest of the page, costs no operation per visit and needs
 * only the read role to look at. The agent's undo reads the cluster itself, so a stale row cannot roll back to the
 * wrong template.
 */
export function RolloutPanel({ workload }: { workload: KubernetesObject }) {
  const { api } = useServices();
  const { fleet } = useFleet();
  const { outcome, run } = useOperationRun();
  const [pending, setPending] = useState<Pending | null>(null);
  const kind = holderKind(workload.kind);
  const selector = selectorOf(workload);
  const history = useLiveQuery<KubernetesObject[]>(
    JSON.stringify([workload.account, workload.namespace, workload.uid, selector]),
    async (signal) => {
      const got = await api.objects.listObjects(
        { account: workload.account, kind, namespace: workload.namespace, labelSelector: selector, pageSize: MAX_HOLDERS },
        { signal },
      );
      return got.objects;
    },
    accountsSignal(fleet, [workload.account]),
  );
  const revisions = history.data ? revisionsOf(workload, history.data) : undefined;
  const paused = (workload.object?.spec as { paused?: unknown } | undefined)?.paused === true;
  const title = objectTitle(workload);
  const busy = outcome.kind === 'submitting' || (outcome.kind === 'record' && outcome.following);

  const request = (action: RolloutAction, toRevision = 0): Request => ({
    account: workload.account,
    spec: {
      case: 'rollout',
      value: {
        apiVersion: workload.apiVersion,
        kind: workload.kind,
        namespace: workload.namespace,
        name: workload.name,
        action,
        toRevision: BigInt(toRevision),
      },
    },
  });
  const submit = (r: Request) => {
    setPending(null);
    void run(r);
  };

  return (
    <section class="panel" aria-label="Rollout">
      <h2>Rollout</h2>
      <div class="actions">
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            setPending({ question: `Restart every pod of ${title}?`, confirm: 'Restart', request: request(RolloutAction.RESTART) })
          }
        >
          Restart
        </button>
        {workload.kind === 'Deployment' &&
          (paused ? (
            <button type="button" disabled={busy} onClick={() => submit(request(RolloutAction.RESUME))}>
              Resume
            </button>
          ) : (
            <button type="button" disabled={busy} onClick={() => submit(request(RolloutAction.PAUSE))}>
              Pause
            </button>
          ))}
        {workload.kind === 'Deployment' && (
          <span class="muted" aria-live="polite">
            {paused ? 'Paused: template changes are not rolled out.' : 'Not paused.'}
          </span>
        )}
      </div>
      {pending && (
        <fieldset class="confirm" aria-label="Confirm rollout action">
          <legend>{pending.question}</legend>
          <button type="button" class="danger" onClick={() => submit(pending.request)}>
            {pending.confirm}
          </button>
          <button type="button" onClick={() => setPending(null)}>
            Cancel
          </button>
        </fieldset>
      )}
      <OutcomeText outcome={outcome} label="Rollout result" />
      <h3>Revision history</h3>
      <ErrorMessage error={history.error} context="Could not load the revision history" />
      {!revisions ? (
        history.busy && <p class="loading">Loading the revisions…</p>
      ) : revisions.length === 0 ? (
        <p class="empty">
          No revisions in the cache ({kind} objects owned by this {workload.kind}).
        </p>
      ) : (
        <TableScroll label="Revision history table">
          <table>
            <thead>
              <tr>
                <th scope="col" class="num">
                  Revision
                </th>
                <th scope="col">Images</th>
                <th scope="col">Change cause</th>
                <th scope="col">Created</th>
                <th scope="col">{kind}</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {revisions.map((r) => (
                <tr key={r.holder} data-revision={r.revision}>
                  <td class="num">{r.revision}</td>
                  <td class="wrap">{r.images.join(', ') || '—'}</td>
                  <td class="wrap">{r.changeCause || <span class="muted">none</span>}</td>
                  <td>{r.createdMs ? formatLocalMs(r.createdMs) : '—'}</td>
                  <td class="mono">{r.holder}</td>
                  <td>
                    {r.current ? (
                      <strong>current</strong>
                    ) : (
                      <button
                        type="button"
                        class="small"
                        disabled={busy}
                        onClick={() =>
                          setPending({
                            question: `Roll ${title} back to revision ${r.revision} (${r.images.join(', ') || r.holder})?`,
                            confirm: 'Roll back',
                            request: request(RolloutAction.UNDO, r.revision),
                          })
                        }
                      >
                        Roll back to revision {r.revision}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}

import type { JsonObject, JsonValue } from '@bufbuild/protobuf';
import { useRef } from 'preact/hooks';
import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { BreakAfter } from './break-after.js';
import { ErrorMessage } from './error-message.js';
import { accountsSignal } from './fleet-signals.js';
import { formatCount } from './format.js';
import { HealthBadge } from './health-badge.js';
import { objectsQuery, readObjectAction } from './object-action.js';
import { objectFilterKey, objectKey, readObjectFilter } from './object-filter.js';
import { objectHref } from './object-href.js';
import { ObjectsFilterForm } from './objects-filter-form.js';
import { OperationForm } from './operation-form.js';
import type { OperationDraft } from './operation-request.js';
import { PageTitle } from './page-title.js';
import { podStatusOf } from './pod-status.js';
import { hrefFor, navigate } from './router.js';
import { useServices } from './services.js';
import { TableScroll } from './table-scroll.js';
import { TimeText } from './time-text.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';
import { usePagedQuery } from './use-paged-query.js';

const PAGE_SIZE = 200;
const MAX_PAGE_SIZE = 1000;
const RESTARTABLE = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);

const asObject = (v: JsonValue | undefined): JsonObject | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;

/** spec.replicas when the object has one (workloads), else undefined. */
function specReplicas(o: KubernetesObject): number | undefined {
  const r = asObject(o.object?.spec)?.replicas;
  return typeof r === 'number' ? r : undefined;
}

/** "ready/desired" (status.readyReplicas, 0 when absent, over spec.replicas); empty for objects without replicas. */
function replicasText(o: KubernetesObject): string {
  const desired = specReplicas(o);
  if (desired === undefined) return '';
  const ready = asObject(o.object?.status)?.readyReplicas;
  return `${typeof ready === 'number' ? ready : 0}/${desired}`;
}

/** Which optional columns the objects table shows for `items`, and how many columns it has then. */
function objectColumns(items: KubernetesObject[]): { pods: boolean; replicas: boolean; count: number } {
  const pods = items.some((o) => o.kind === 'Pod');
  const replicas = items.some((o) => specReplicas(o) !== undefined);
  return { pods, replicas, count: 7 + (pods ? 2 : 0) + (replicas ? 1 : 0) };
}

/** A row's Status and Restarts cells: kubectl's for a Pod, empty for other kinds. */
function PodCells({ object }: { object: KubernetesObject }) {
  if (object.kind !== 'Pod') {
    return (
      <>
        <td data-col="status" />
        <td data-col="restarts" class="num" />
      </>
    );
  }
  const { status, restarts } = podStatusOf(object.object);
  return (
    <>
      <td data-col="status">{status}</td>
      <td data-col="restarts" class="num">
        {formatCount(restarts)}
      </td>
    </>
  );
}

/**
 * Cached objects (ObjectService.ListObjects with bodies, 200 a page, "Load more"), filtered by the hash query. Pods
 * get kubectl's Status and Restarts columns; the Replicas column shows only when a listed object has replicas.
 * The list re-runs, keeping the filter and the number of rows loaded, whenever the fleet summary shows a filtered
 * account (any account without an account filter) receiving events or changing state. Names link to the object's
 * page; row shortcuts open the operation form prefilled, through the URL (object-action.ts), so Back closes it.
 */
export function ObjectsView({ query }: { query: URLSearchParams }) {
  const { api } = useServices();
  const { fleet } = useFleet();
  const filter = readObjectFilter(query);
  const action = readObjectAction(query);
  const returnFocus = useRef<HTMLElement | null>(null);
  const filterKey = objectFilterKey(filter);

  const accounts = useLiveQuery(
    'accounts',
    (signal) => api.accounts.listAccounts({}, { signal }).then((r) => r.accounts),
    fleet ? fleet.accounts.map((a) => `${a.name}:${a.state}`).join(',') : null,
  );
  const list = usePagedQuery<KubernetesObject>(
    filterKey,
    (pageToken, pageSize, signal) =>
      api.objects
        .listObjects(
          {
            account: filter.account,
            kind: filter.kind,
            namespace: filter.namespace,
            labelSelector: filter.labels,
            omitObject: false,
            pageSize,
            pageToken,
          },
          { signal },
        )
        .then((r) => ({ items: r.objects, nextPageToken: r.nextPageToken })),
    accountsSignal(fleet, filter.account ? [filter.account] : null),
    PAGE_SIZE,
    MAX_PAGE_SIZE,
  );

  const items = list.items;
  const columns = objectColumns(items ?? []);
  const remember = (event: Event): void => {
    returnFocus.current = event.currentTarget as HTMLElement;
  };
  const restoreFocus = (): void => {
    const el = returnFocus.current;
    if (el?.isConnected) el.focus();
  };
  const openAction = (event: Event, draft: Partial<OperationDraft>): void => {
    remember(event);
    navigate(hrefFor('objects', objectsQuery(filter, draft)));
  };

  return (
    <>
      <PageTitle title="Objects" />
      <ObjectsFilterForm filter={filter} accounts={accounts.data} />

      {action && (
        <section class="panel" aria-labelledby="object-action-title">
          <div class="panel-head">
            <h2 id="object-action-title">
              Operation on {action.draft.kind} {action.draft.namespace ? `${action.draft.namespace}/` : ''}
              {action.draft.name}
            </h2>
            <button
              type="button"
              onClick={() => {
                navigate(hrefFor('objects', objectsQuery(filter)));
                restoreFocus();
              }}
            >
              Close
            </button>
          </div>
          <OperationForm key={action.key} initial={action.draft} accounts={accounts.data?.map((a) => a.name)} autoFocus />
        </section>
      )}

      <ErrorMessage error={list.error} context="Could not load the objects" />
      {!items ? (
        list.busy && <p class="loading">Loading objects…</p>
      ) : (
        <>
          <TableScroll label="Objects table">
            <table aria-busy={list.busy ? 'true' : 'false'}>
              <caption>
                {formatCount(items.length)} {items.length === 1 ? 'object' : 'objects'}
                {list.hasMore ? ' shown, more available' : ''}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Namespace</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Account</th>
                  <th scope="col">Health</th>
                  {columns.pods && (
                    <>
                      <th scope="col" title="As kubectl's STATUS: the phase, or why a container waits or ended">
                        Status
                      </th>
                      <th scope="col" class="num" title="Container restarts (the sum of restartCount)">
                        Restarts
                      </th>
                    </>
                  )}
                  {columns.replicas && (
                    <th scope="col" class="num">
                      Replicas
                    </th>
                  )}
                  <th scope="col">Updated</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {items.length === 0 && (
                  <tr>
                    <td colSpan={columns.count} class="empty">
                      No cached object matches this filter.
                    </td>
                  </tr>
                )}
                {items.map((o) => {
                  const key = objectKey(o);
                  const target = { account: o.account, kind: o.kind, namespace: o.namespace, name: o.name };
                  const replicas = specReplicas(o);
                  const nameId = `obj-${o.uid || key}`;
                  return (
                    <tr key={`${o.apiVersion}/${key}`} data-key={key}>
                      <th scope="row" class="break-after">
                        <a href={objectHref(o)} id={nameId}>
                          <BreakAfter text={o.name} after="-." />
                        </a>
                      </th>
                      <td>{o.namespace || <span class="muted">(cluster)</span>}</td>
                      <td>{o.kind}</td>
                      <td>{o.account}</td>
                      <td data-col="health">
                        <HealthBadge health={o.health} />
                      </td>
                      {columns.pods && <PodCells object={o} />}
                      {columns.replicas && (
                        <td data-col="replicas" class="num">
                          {replicasText(o)}
                        </td>
                      )}
                      <td>
                        <TimeText ts={o.updatedAt} />
                      </td>
                      <td class="row-actions">
                        <div>
                          {replicas !== undefined && (
                            <button
                              type="button"
                              class="small"
                              aria-describedby={nameId}
                              onClick={(e) => openAction(e, { ...target, op: 'scale', replicas: String(replicas) })}
                            >
                              Scale…
                            </button>
                          )}
                          {RESTARTABLE.has(o.kind) && (
                            <button
                              type="button"
                              class="small"
                              aria-describedby={nameId}
                              onClick={(e) => openAction(e, { ...target, op: 'restart' })}
                            >
                              Restart
                            </button>
                          )}
                          <button
                            type="button"
                            class="small danger"
                            aria-describedby={nameId}
                            onClick={(e) => openAction(e, { ...target, op: 'delete' })}
                          >
                            Delete
                          </button>
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableScroll>
          {list.hasMore && (
            <p>
              <button type="button" onClick={list.loadMore} disabled={list.busy}>
                Load more
              </button>
            </p>
          )}
        </>
      )}
    </>
  );
}

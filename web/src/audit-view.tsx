import { useEffect, useId, useState } from 'preact/hooks';
import type { AuditEvent } from '../../src/gen/outpost/api/v1/audit_service_pb.js';
import { BreakAfter } from './break-after.js';
import { ErrorMessage } from './error-message.js';
import { operationsSignal } from './fleet-signals.js';
import { formatCount, formatMs, NONE } from './format.js';
import { PageTitle } from './page-title.js';
import { readPageSize } from './page-size.js';
import { Pager } from './pager.js';
import { hrefFor, navigate } from './router.js';
import { useServices } from './services.js';
import { TableScroll } from './table-scroll.js';
import { TimeText } from './time-text.js';
import { useFleet } from './use-fleet.js';
import { usePageCursor } from './use-page-cursor.js';

const KINDS = ['kube', 'operation', 'session'] as const;

/** The filters of the view, read from the hash query (`#/audit?account=&principal=&kind=`). */
interface AuditFilters {
  account: string;
  principal: string;
  kind: string;
}

function readFilters(query: URLSearchParams): AuditFilters {
  const kind = query.get('kind') ?? '';
  return {
    account: query.get('account') ?? '',
    principal: query.get('principal') ?? '',
    kind: (KINDS as readonly string[]).includes(kind) ? kind : '',
  };
}

/** "apps/deployments/scale": the group, resource and subresource that are set. */
function resourceOf(e: AuditEvent): string {
  return [e.apiGroup, e.resource, e.subresource].filter((s) => s !== '').join('/') || NONE;
}

/** "namespace/name", either part left out when empty. */
function objectOf(e: AuditEvent): string {
  return [e.namespace, e.name].filter((s) => s !== '').join('/') || NONE;
}

/** "1.2 kB in / 34 B out"-style byte counts in one cell. */
function bytesOf(e: AuditEvent): string {
  return `${formatBytes(e.bytesIn)} in / ${formatBytes(e.bytesOut)} out`;
}

function formatBytes(n: bigint): string {
  const v = Number(n);
  if (v < 1024) return `${formatCount(v)} B`;
  if (v < 1024 * 1024) return `${(v / 1024).toFixed(1)} KiB`;
  return `${(v / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * Audit: every proxied Kubernetes request and submitted operation (AuditService.ListAuditEvents, admin only), one
 * page at a time (50 rows, or `size=`, with Newest/Previous/Next), newest first, filtered by account, principal and
 * kind through the hash query. Metadata only: the audit log holds no request or response bodies. The page shown is
 * re-fetched when the fleet's recent operations change, and on "Refresh".
 */
export function AuditView({ query }: { query: URLSearchParams }) {
  const { api } = useServices();
  const { fleet } = useFleet();
  const filters = readFilters(query);
  const pageSize = readPageSize(query);
  const [refreshes, setRefreshes] = useState(0);
  const entries = usePageCursor<AuditEvent>(
    JSON.stringify(filters),
    (pageToken, pageSize, signal) =>
      api.audit
        .listAuditEvents({ ...filters, pageSize, pageToken }, { signal })
        .then((r) => ({ items: r.events, nextPageToken: r.nextPageToken })),
    `${operationsSignal(fleet) ?? ''}|${refreshes}`,
    pageSize,
  );
  const items = entries.items;

  return (
    <>
      <PageTitle title="Audit" />
      <AuditFilter filters={filters} accounts={fleet?.accounts.map((a) => a.name) ?? []} size={query.get('size') ?? ''} />
      <ErrorMessage error={entries.error} context="Could not load the audit log" />
      {!items ? (
        entries.busy && <p class="loading">Loading the audit log…</p>
      ) : (
        <>
          <TableScroll label="Audit table">
            <table aria-busy={entries.busy ? 'true' : 'false'}>
              <caption>
                Page {entries.page}: {formatCount(items.length)} {items.length === 1 ? 'entry' : 'entries'}, newest first
                {entries.hasNext ? ' (more on the next page)' : ''}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Who</th>
                  <th scope="col">Account</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Verb</th>
                  <th scope="col">Resource</th>
                  <th scope="col">Namespace/name</th>
                  <th scope="col" class="num">
                    Status
                  </th>
                  <th scope="col" class="num">
                    Bytes
                  </th>
                  <th scope="col" class="num">
                    Duration
                  </th>
                  <th scope="col">Impersonated user</th>
                </tr>
              </thead>
              <tbody>
                {items.length === 0 && (
                  <tr>
                    <td colSpan={11} class="empty">
                      No audit entries match.
                    </td>
                  </tr>
                )}
                {items.map((e) => (
                  <tr key={e.id} data-audit={e.id} title={e.error || e.path || e.operationId || undefined}>
                    <td>
                      <TimeText ts={e.startedAt} />
                    </td>
                    <td class="mono break-after" data-col="who">
                      {e.principal ? <BreakAfter text={e.principal} /> : NONE}
                      {e.groups.length > 0 && (
                        <div class="muted" data-col="groups">
                          <BreakAfter text={e.groups.join(', ')} />
                        </div>
                      )}
                    </td>
                    <td>{e.account || NONE}</td>
                    <td>{e.kind}</td>
                    <td>{e.verb || NONE}</td>
                    <td class="wrap-cell">{resourceOf(e)}</td>
                    <td class="wrap-cell">{objectOf(e)}</td>
                    <td class="num">{e.stage === 'started' ? 'started' : e.status === 0 ? NONE : e.status}</td>
                    <td class="num wrap-cell">{e.stage === 'started' ? NONE : bytesOf(e)}</td>
                    <td class="num">{e.stage === 'started' ? NONE : formatMs(Number(e.durationMs))}</td>
                    <td class="break-after" data-col="impersonated">
                      {e.impersonatedUser ? <BreakAfter text={e.impersonatedUser} /> : NONE}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          <div class="pager-row">
            <Pager cursor={entries} label="Audit pages" />
            <button type="button" onClick={() => setRefreshes((n) => n + 1)} disabled={entries.busy}>
              Refresh
            </button>
          </div>
        </>
      )}
    </>
  );
}

/** The filter form; writes `account`, `principal` and `kind` into the hash query on submit (keeping `size`). */
function AuditFilter({ filters, accounts, size }: { filters: AuditFilters; accounts: string[]; size: string }) {
  const [draft, setDraft] = useState(filters);
  useEffect(() => setDraft(filters), [filters.account, filters.principal, filters.kind]);
  const id = useId();
  return (
    <form
      aria-label="Filter audit entries"
      class="filter"
      onSubmit={(e) => {
        e.preventDefault();
        navigate(hrefFor('audit', { ...draft, account: draft.account.trim(), principal: draft.principal.trim(), size }));
      }}
    >
      <div class="field">
        <label for={`${id}-account`}>Account</label>
        <input
          id={`${id}-account`}
          list={`${id}-accounts`}
          value={draft.account}
          placeholder="All accounts"
          onInput={(e) => setDraft((d) => ({ ...d, account: e.currentTarget.value }))}
        />
        <datalist id={`${id}-accounts`}>
          {accounts.map((n) => (
            <option key={n} value={n} />
          ))}
        </datalist>
      </div>
      <div class="field">
        <label for={`${id}-principal`}>Principal</label>
        <input
          id={`${id}-principal`}
          value={draft.principal}
          placeholder="e.g. token:alice"
          onInput={(e) => setDraft((d) => ({ ...d, principal: e.currentTarget.value }))}
        />
      </div>
      <div class="field">
        <label for={`${id}-kind`}>Kind</label>
        <select id={`${id}-kind`} value={draft.kind} onChange={(e) => setDraft((d) => ({ ...d, kind: e.currentTarget.value }))}>
          <option value="">All kinds</option>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </div>
      <div class="actions">
        <button type="submit">Filter</button>
      </div>
    </form>
  );
}

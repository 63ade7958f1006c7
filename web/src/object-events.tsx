import { Code, ConnectError } from '@connectrpc/connect';
import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { ErrorMessage } from './error-message.js';
import { accountsSignal } from './fleet-signals.js';
import { formatCount, formatLocalMs } from './format.js';
import { useServices } from './services.js';
import { TableScroll } from './table-scroll.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';

/** The most Events one page of ListObjects returns; an object with more shows the newest of these. */
const MAX_EVENTS = 1000;

/** One row of the Events table. */
export interface EventRow {
  key: string;
  type: string;
  reason: string;
  message: string;
  count: number;
  /** Milliseconds since the epoch, 0 when the Event says nothing. */
  lastSeen: number;
  /** metadata.resourceVersion as a number (NaN when it is not one): orders Events seen in the same second. */
  version: number;
}

type Obj = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});

/**
 * Reads a cached Event (core v1 or events.k8s.io/v1) into a row: the last time it was seen is the first of
 * lastTimestamp, series.lastObservedTime, eventTime, firstTimestamp and creationTimestamp that is set.
 */
function toEventRow(event: KubernetesObject): EventRow {
  const o = obj(event.object);
  const series = obj(o.series);
  const seen = [o.lastTimestamp, series.lastObservedTime, o.eventTime, o.firstTimestamp, obj(o.metadata).creationTimestamp]
    .map((v) => Date.parse(str(v)))
    .find((ms) => Number.isFinite(ms));
  const count = [o.count, series.count, o.deprecatedCount].find((v) => typeof v === 'number' && v > 0);
  return {
    key: `${event.namespace}/${event.name}`,
    type: str(o.type),
    reason: str(o.reason),
    message: str(o.message) || str(o.note),
    count: typeof count === 'number' ? count : 1,
    lastSeen: seen ?? 0,
    version: Number(event.resourceVersion),
  };
}

/** Latest last-seen first; within a second (Events record whole seconds), the later write first, if known. */
function newestFirst(a: EventRow, b: EventRow): number {
  if (a.lastSeen !== b.lastSeen) return b.lastSeen - a.lastSeen;
  if (Number.isFinite(a.version) && Number.isFinite(b.version) && a.version !== b.version) return b.version - a.version;
  return a.key.localeCompare(b.key);
}

interface EventsResult {
  rows: EventRow[];
  /** More Events than one page holds. */
  truncated: boolean;
  /** False when the account has no cached Event at all (the agent does not watch them, or omits them). */
  accountHasEvents: boolean;
}

/**
 * The region "Events": the cached Events about `object` (ListObjects with involved_object_uid), newest first,
 * re-read whenever its account receives changes. The same Event cached in two API groups is shown once. When there
 * are none, it says whether the account caches Events at all.
 */
export function ObjectEvents({ object }: { object: KubernetesObject }) {
  const { api } = useServices();
  const { fleet } = useFleet();
  const query = useLiveQuery<EventsResult>(
    JSON.stringify([object.account, object.uid]),
    async (signal) => {
      const got = await api.objects.listObjects(
        { account: object.account, involvedObjectUid: object.uid, pageSize: MAX_EVENTS },
        { signal },
      );
      const byKey = new Map<string, EventRow>();
      for (const event of got.objects) {
        const row = toEventRow(event);
        if (!byKey.has(row.key) || event.apiVersion === 'v1') byKey.set(row.key, row);
      }
      const rows = [...byKey.values()].sort(newestFirst);
      let accountHasEvents = true;
      if (rows.length === 0) {
        // NOT_FOUND: the account has no kind Event at all (ListObjects names a kind the account lacks that way).
        const any = await api.objects
          .listObjects({ account: object.account, kind: 'Event', pageSize: 1, omitObject: true }, { signal })
          .catch((err: unknown) => {
            if (err instanceof ConnectError && err.code === Code.NotFound) return { objects: [] };
            throw err;
          });
        accountHasEvents = any.objects.length > 0;
      }
      return { rows, truncated: got.nextPageToken !== '', accountHasEvents };
    },
    accountsSignal(fleet, [object.account]),
  );
  const data = query.data;

  return (
    <section class="panel" aria-label="Events">
      <h2>Events</h2>
      <ErrorMessage error={query.error} context="Could not load the events" />
      {!data ? (
        query.busy && <p class="loading">Loading events…</p>
      ) : data.rows.length === 0 ? (
        <p class="empty">
          {data.accountHasEvents
            ? 'No events about this object in the cache.'
            : `Account ${object.account} caches no Events (its agent does not watch them, or the cluster has none).`}
        </p>
      ) : (
        <>
          {data.truncated && (
            <p class="hint">
              More than {formatCount(MAX_EVENTS)} events: showing the newest of the first {formatCount(MAX_EVENTS)}.
            </p>
          )}
          <TableScroll label="Events table">
            <table>
              <thead>
                <tr>
                  <th scope="col">Type</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Message</th>
                  <th scope="col" class="num">
                    Count
                  </th>
                  <th scope="col">Last seen</th>
                </tr>
              </thead>
              <tbody>
                {data.rows.map((row) => (
                  <tr key={row.key} data-event={row.reason}>
                    <td>
                      <span class={`badge tone-${row.type === 'Warning' ? 'bad' : 'neutral'}`}>{row.type || 'Normal'}</span>
                    </td>
                    <td>{row.reason}</td>
                    <td class="wrap">{row.message}</td>
                    <td class="num">{formatCount(row.count)}</td>
                    <td>
                      {row.lastSeen ? <time dateTime={new Date(row.lastSeen).toISOString()}>{formatLocalMs(row.lastSeen)}</time> : '—'}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        </>
      )}
    </section>
  );
}

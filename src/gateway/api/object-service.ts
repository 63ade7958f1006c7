/**
 * `outpost.api.v1.ObjectService`: reads the object cache. ListObjects pages with an opaque keyset token in primary-key
 * order (account, kind, apiVersion, namespace, name), so every page is one index range scan however deep it is.
 * Every object returned carries its workload health, computed from its body (object-health.ts) — from a slim copy
 * read in SQL when the caller omits bodies.
 */
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import type { Database } from '../../db/database.js';
import type { KubernetesObject } from '../../gen/outpost/api/v1/object_service_pb.js';
import type { ObjectService } from '../../gen/outpost/api/v1/object_service_pb.js';
import { invalidArgument } from '../http/errors.js';
import { summarizeHealth } from './health-summary.js';
import { checkObjectFilter } from './object-filter-check.js';
import { healthMessage } from './object-health.js';
import { decodePageToken, encodePageToken, type PageFilters } from './page-token.js';
import type { ObjectKey } from '../cache/object-key-order.js';
import { objectListConditions } from '../cache/object-list-filter.js';
import { type CachedObjectRow, readObjectPage, readObjectVersions } from '../cache/object-reads.js';

/** Default and largest page sizes of ListObjects (larger requests are reduced to the maximum). */
const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

type ObjectRow = CachedObjectRow;

/** Creates the ObjectService implementation over the cache. */
export function createObjectService(database: Database): Partial<ServiceImpl<typeof ObjectService>> {
  const { db } = database;
  return {
    async listObjects(req) {
      if (req.pageSize < 0) throw invalidArgument('page_size must not be negative');
      const pageSize = req.pageSize === 0 ? DEFAULT_PAGE_SIZE : Math.min(req.pageSize, MAX_PAGE_SIZE);
      const filters: PageFilters = {
        account: req.account,
        kind: req.kind,
        namespace: req.namespace,
        labelSelector: req.labelSelector,
        omitObject: req.omitObject,
        ownerUid: req.ownerUid,
        involvedObjectUid: req.involvedObjectUid,
      };
      const conditions = objectListConditions(req);
      const after = req.pageToken ? decodePageToken(req.pageToken, filters) : undefined;
      const rows = await readObjectPage(db, { conditions, after, omitObject: req.omitObject, limit: pageSize + 1 });
      // An empty first page may be a wrong filter (unknown account or kind): say so instead of an empty answer.
      if (rows.length === 0 && !req.pageToken) await checkObjectFilter(database, { account: req.account, kind: req.kind });
      const more = rows.length > pageSize;
      const page = more ? rows.slice(0, pageSize) : rows;
      const last = page[page.length - 1];
      const nextPageToken = more && last ? encodePageToken(keyOf(last), filters) : '';
      return { objects: page.map(toKubernetesObject), nextPageToken };
    },

    async getObject(req) {
      const missing = ['account', 'kind', 'name'].filter((f) => !req[f as 'account' | 'kind' | 'name']);
      if (missing.length > 0) throw invalidArgument(`${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} required`);
      const rows = await readObjectVersions(db, req, 2);
      const where = `${req.kind} ${req.namespace ? `${req.namespace}/` : ''}${req.name} in account ${req.account}`;
      if (rows.length === 0) throw new ConnectError(`${where} is not in the cache`, Code.NotFound);
      if (rows.length > 1) {
        throw invalidArgument(`${where} exists in several API groups (${rows.map((r) => r.apiVersion).join(', ')}); set api_version`);
      }
      return { object: toKubernetesObject(rows[0]!) };
    },

    async summarizeHealth(req) {
      return summarizeHealth(database, req.account);
    },
  };
}

function keyOf(row: ObjectRow): ObjectKey {
  return [row.account, row.kind, row.apiVersion, row.namespace, row.name];
}

function toKubernetesObject(row: ObjectRow): KubernetesObject {
  return {
    $typeName: 'outpost.api.v1.KubernetesObject',
    account: row.account,
    apiVersion: row.apiVersion,
    kind: row.kind,
    namespace: row.namespace,
    name: row.name,
    uid: row.uid,
    resourceVersion: row.resourceVersion,
    labels: { ...row.labels },
    object: row.object as KubernetesObject['object'],
    updatedAt: timestampFromDate(row.updatedAt),
    health: healthMessage(row.object ?? row.statusInput),
  };
}

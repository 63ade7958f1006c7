/**
 * The conditions of a ListObjects request on the `objects` columns: account, kind, namespace, label selector, owner
 * and involved-object uids. They live with the cache (the table's owner) so a column change reaches only the cache;
 * the client API hands in the request's fields and gets the conditions for cache/object-reads.ts's readObjectPage.
 * A field that cannot be right (a malformed label selector or uid) rejects with INVALID_ARGUMENT, in the order the
 * fields are checked here (involved-object uid, label selector, owner uid): callers must build the conditions before
 * any other check they want to come after those.
 */
import { eq, type SQL } from 'drizzle-orm';
import { objects } from '../../db/schema.js';
import { parseLabelSelector, SelectorError, type LabelRequirement } from '../../shared/label-selector.js';
import { invalidArgument } from '../http/errors.js';
import { labelSelectorToSql } from './label-selector-sql.js';
import { involvedObjectSql, ownerUidSql } from './uid-filters.js';

/** The filter fields of a ListObjects request; '' leaves a field out. */
export interface ObjectListFilter {
  account: string;
  kind: string;
  namespace: string;
  labelSelector: string;
  ownerUid: string;
  involvedObjectUid: string;
}

/** The conditions of `filter` (undefined entries match everything), for readObjectPage. */
export function objectListConditions(filter: ObjectListFilter): (SQL | undefined)[] {
  const conditions: (SQL | undefined)[] = [];
  if (filter.account) conditions.push(eq(objects.account, filter.account));
  if (filter.kind) conditions.push(eq(objects.kind, filter.kind));
  conditions.push(involvedObjectSql(filter.kind, filter.involvedObjectUid));
  if (filter.namespace) conditions.push(eq(objects.namespace, filter.namespace));
  conditions.push(labelSelectorToSql(objects.labels, parseSelector(filter.labelSelector)));
  conditions.push(ownerUidSql(filter.ownerUid));
  return conditions;
}

function parseSelector(selector: string): LabelRequirement[] {
  try {
    return parseLabelSelector(selector);
  } catch (err) {
    // Stryker disable next-line ConditionalExpression: true changes nothing, parseLabelSelector throws only SelectorError (false, a refusal not INVALID_ARGUMENT, goes unrun with it)
    if (err instanceof SelectorError) throw invalidArgument(`label_selector: ${err.message}`);
    throw err;
  }
}

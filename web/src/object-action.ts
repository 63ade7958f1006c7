import type { ObjectFilter } from './object-filter.js';
import { OPERATION_CHOICES, type OperationChoice, type OperationDraft } from './operation-request.js';

/** An operation a row shortcut of the Objects page opened, prefilled for one object. */
export interface ObjectAction {
  draft: Partial<OperationDraft>;
  /** Changes when the action does (the form is remounted with the new values). */
  key: string;
}

const CLUSTER = '_';

/**
 * Reads the opened shortcut from the Objects page's hash query (`act=scale&on=account/kind/namespace-or-_/name`,
 * `replicas=` for scale), so the prefilled form has a URL: Back closes it, a link opens it. Undefined when absent
 * or malformed (the page then shows no form).
 */
export function readObjectAction(query: URLSearchParams): ObjectAction | undefined {
  const act = query.get('act') ?? '';
  const parts = (query.get('on') ?? '').split('/');
  if (!OPERATION_CHOICES.includes(act as OperationChoice) || act === 'apply' || parts.length !== 4 || parts.some((p) => p === '')) {
    return undefined;
  }
  let account: string;
  let kind: string;
  let namespace: string;
  let name: string;
  try {
    [account, kind, namespace, name] = parts.map(decodeURIComponent) as [string, string, string, string];
  } catch {
    return undefined;
  }
  const draft: Partial<OperationDraft> = {
    op: act as OperationChoice,
    account,
    kind,
    namespace: namespace === CLUSTER ? '' : namespace,
    name,
  };
  const replicas = query.get('replicas');
  if (act === 'scale' && replicas !== null) draft.replicas = replicas;
  return { draft, key: `${act}|${query.get('on')}|${replicas ?? ''}` };
}

/** The hash query of the Objects page with `filter` and, when given, the shortcut `action` opened. */
export function objectsQuery(filter: ObjectFilter, action?: Partial<OperationDraft>): Record<string, string> {
  const query: Record<string, string> = {
    account: filter.account,
    kind: filter.kind,
    namespace: filter.namespace,
    labels: filter.labels,
  };
  if (!action?.op) return query;
  const on = [action.account ?? '', action.kind ?? '', action.namespace || CLUSTER, action.name ?? ''].map(encodeURIComponent).join('/');
  return { ...query, act: action.op, on, replicas: action.op === 'scale' ? (action.replicas ?? '') : '' };
}

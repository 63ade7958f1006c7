/**
 * Query-string selectors (`labelSelector`, `fieldSelector`) turned into one object predicate; a malformed selector is
 * a 400 BadRequest, as from kube-apiserver.
 */
import { matchesLabelSelector, parseLabelSelector } from '../../shared/label-selector.js';
import { matchesFieldSelector, parseFieldSelector } from '../field-selector.js';
import { errors } from '../errors.js';
import type { KubeObject } from '../types.js';

/** A predicate over stored objects, or undefined when the query selects everything. */
export type ObjectFilter = ((obj: KubeObject) => boolean) | undefined;

/** Builds the filter for `labelSelector` and `fieldSelector` query parameters. */
export function selectorFilter(query: URLSearchParams): ObjectFilter {
  const labelText = query.get('labelSelector') ?? '';
  const fieldText = query.get('fieldSelector') ?? '';
  let labels: ReturnType<typeof parseLabelSelector> | undefined;
  let fields: ReturnType<typeof parseFieldSelector> | undefined;
  try {
    if (labelText.trim()) labels = parseLabelSelector(labelText);
  } catch (err) {
    throw errors.badRequest(`unable to parse requirement: ${(err as Error).message}`);
  }
  try {
    if (fieldText.trim()) fields = parseFieldSelector(fieldText);
  } catch (err) {
    throw errors.badRequest(`"${fieldText}" is not a known field selector: ${(err as Error).message}`);
  }
  if (!labels && !fields) return undefined;
  return (obj) =>
    (!labels || matchesLabelSelector(labels, obj.metadata.labels)) &&
    (!fields || matchesFieldSelector(fields, obj as unknown as Record<string, unknown>));
}

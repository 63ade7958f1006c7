import { hrefFor } from './router.js';

/** An operation's own page, `#/operations/{id}`: shareable, and back/forward return to it. */
export function operationHref(id: string): string {
  return hrefFor(`operations/${encodeURIComponent(id)}`);
}

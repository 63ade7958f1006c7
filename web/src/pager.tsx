import type { PageCursor } from './use-page-cursor.js';

/** Rows a page when the URL does not say (`size=`). */
export const DEFAULT_PAGE_SIZE = 50;
/** The most rows a page the list RPCs return. */
export const MAX_PAGE_SIZE = 500;

/** The page size from the hash query's `size` (a whole number, 1 to 500); the default for anything else. */
export function readPageSize(query: URLSearchParams): number {
  const raw = query.get('size') ?? '';
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  return n >= 1 ? Math.min(n, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
}

/**
 * The Newest / Previous / Next buttons under a paged table, with the page number. The buttons are always there
 * (disabled when there is nowhere to go, or while a page loads), so they do not move under the pointer. `label`
 * names the navigation landmark ("Operations pages").
 */
export function Pager({ cursor, label }: { cursor: PageCursor<unknown>; label: string }) {
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" onClick={cursor.first} disabled={!cursor.hasPrevious || cursor.busy}>
        Newest
      </button>
      <button type="button" onClick={cursor.previous} disabled={!cursor.hasPrevious || cursor.busy}>
        Previous page
      </button>
      <span class="page-number" aria-live="polite">
        Page {cursor.page}
      </span>
      <button type="button" onClick={cursor.next} disabled={!cursor.hasNext || cursor.busy}>
        Next page
      </button>
    </nav>
  );
}

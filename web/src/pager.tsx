import type { PageCursor } from './use-page-cursor.js';

/**
 * The Newest / Previous / Next buttons under a paged table, with the page number. The buttons are always there
 * (disabled when there is nowhere to go, or while a page loads), so they do not move under the pointer. `label`
 * names the navigation landmark ("Operations pages"). While a page loads the table keeps the rows shown before, and the
 * navigation is `aria-busy`.
 */
export function Pager({ cursor, label }: { cursor: PageCursor<unknown>; label: string }) {
  return (
    <nav class="pager" aria-label={label} aria-busy={cursor.busy ? 'true' : 'false'}>
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

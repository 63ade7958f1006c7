import { useEffect, useRef, useState } from 'preact/hooks';
import type { Page, PageFetcher } from './use-paged-query.js';
import { useLiveQuery } from './use-live-query.js';

/** A token-paged list shown one page at a time, with Next and Previous. */
export interface PageCursor<T> {
  /**
   * The rows of the page shown: the current page's, or while it loads the page shown before it (same key), so the
   * table does not jump; undefined before the first page of a key arrives.
   */
  items: T[] | undefined;
  error: unknown;
  /** True while a fetch runs (then Next and Previous wait). */
  busy: boolean;
  /** The number of the page shown, from 1. */
  page: number;
  /** The server has rows after this page. */
  hasNext: boolean;
  hasPrevious: boolean;
  next(): void;
  previous(): void;
  /** Back to page 1 (the newest rows). */
  first(): void;
}

interface Cursor {
  key: string;
  /** The page token of every page from the first ("") to the one shown. */
  tokens: string[];
}

/**
 * One page of a token-paged list RPC for `key` (the filters), `pageSize` rows a page. Next follows the page's
 * next_page_token; Previous goes back to the token it came from, so the pages read the same both ways: the server's
 * order is total (newest first, then id) and its tokens are keyset positions, so a row never moves to another page
 * while the user pages, and rows added meanwhile show only on page 1. The page shown is fetched again whenever
 * `trigger` changes (useLiveQuery), and from page 1 when `key` changes.
 */
export function usePageCursor<T>(key: string, fetchPage: PageFetcher<T>, trigger: string | null, pageSize: number): PageCursor<T> {
  const [cursor, setCursor] = useState<Cursor>({ key, tokens: [''] });
  // Another key starts at page 1 at once (this render), and the cursor forgets the old key's pages.
  useEffect(() => setCursor((c) => (c.key === key ? c : { key, tokens: [''] })), [key]);
  const tokens = cursor.key === key ? cursor.tokens : [''];
  const token = tokens[tokens.length - 1] ?? '';
  const query = useLiveQuery<Page<T>>(
    JSON.stringify([key, pageSize, tokens.length, token]),
    (signal) => fetchPage(token, pageSize, signal),
    trigger,
  );
  const shown = useRef<{ key: string; page: Page<T> } | undefined>(undefined);
  if (query.data) shown.current = { key, page: query.data };
  const page = query.data ?? (shown.current?.key === key ? shown.current.page : undefined);
  const nextToken = query.data?.nextPageToken ?? '';
  return {
    items: page?.items,
    error: query.error,
    // Also before the query of a new page has started (its first render): the rows shown are still the page before.
    busy: query.busy || (query.data === undefined && query.error === undefined),
    page: tokens.length,
    hasNext: nextToken !== '',
    hasPrevious: tokens.length > 1,
    next: () => {
      if (nextToken !== '') setCursor({ key, tokens: [...tokens, nextToken] });
    },
    previous: () => {
      if (tokens.length > 1) setCursor({ key, tokens: tokens.slice(0, -1) });
    },
    first: () => setCursor({ key, tokens: [''] }),
  };
}

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { createSerialRunner } from './serial-runner.js';
import { useServices } from './services.js';

/** One page of a token-paged list RPC. */
export interface Page<T> {
  items: T[];
  /** Empty on the last page. */
  nextPageToken: string;
}

/** Fetches one page: `pageToken` is "" for the first page. */
export type PageFetcher<T> = (pageToken: string, pageSize: number, signal: AbortSignal) => Promise<Page<T>>;

/** The state of a paged list that follows live updates. */
export interface PagedQuery<T> {
  /** Items loaded so far for the current key (kept while refreshing and after a failed refresh). */
  items: T[] | undefined;
  /** Whether the server has more after `items`. */
  hasMore: boolean;
  error: unknown;
  /** True while a fetch (refresh or load-more) runs. */
  busy: boolean;
  /** Appends the next page (serialised with refreshes). */
  loadMore(): void;
}

interface State<T> {
  key: string;
  items: T[] | undefined;
  next: string;
  error: unknown;
  busy: boolean;
}

/**
 * A token-paged list for `key`, re-fetched whenever `trigger` differs from its value when the last fetch started
 * (see useLiveQuery). A refresh starts again from the first page and walks the page tokens until it holds at least
 * as many items as before (so "Load more" survives live updates), with pages of `pageSize` growing up to
 * `maxPageSize`. Refreshes and load-mores never overlap; a new key aborts the running fetch and starts over.
 */
export function usePagedQuery<T>(
  key: string,
  fetchPage: PageFetcher<T>,
  trigger: string | null,
  pageSize: number,
  maxPageSize: number,
): PagedQuery<T> {
  const { auth } = useServices();
  // The ref is the source of truth (the runner reads it between fetches, before Preact re-renders); the counter
  // only makes Preact render after each change.
  const stateRef = useRef<State<T>>({ key, items: undefined, next: '', error: undefined, busy: true });
  const [, setRenders] = useState(0);
  const commit = (next: State<T>): void => {
    stateRef.current = next;
    setRenders((n) => n + 1);
  };
  const fetchRef = useRef(fetchPage);
  fetchRef.current = fetchPage;
  const keyRef = useRef(key);
  const triggerRef = useRef(trigger);
  triggerRef.current = trigger;
  const startedTriggerRef = useRef<string | null>(null);
  const controllerRef = useRef<AbortController | null>(null);
  const wantRefresh = useRef(true);
  const wantMore = useRef(false);

  const runner = useMemo(
    () =>
      createSerialRunner(async () => {
        const k = keyRef.current;
        const ctl = new AbortController();
        controllerRef.current = ctl;
        const version = auth.state().version;
        const blank: State<T> = { key: k, items: undefined, next: '', error: undefined, busy: true };
        const before = stateRef.current.key === k ? stateRef.current : blank;
        const refresh = wantRefresh.current || before.items === undefined;
        const more = wantMore.current;
        wantRefresh.current = false;
        wantMore.current = false;
        if (refresh) startedTriggerRef.current = triggerRef.current;
        commit({ ...before, busy: true });
        try {
          let items: T[];
          let next: string;
          if (refresh) {
            const target = Math.max(pageSize, (before.items?.length ?? 0) + (more ? pageSize : 0));
            items = [];
            next = '';
            do {
              const size = Math.min(maxPageSize, Math.max(pageSize, target - items.length));
              const page = await fetchRef.current(next, size, ctl.signal);
              items = items.concat(page.items);
              next = page.nextPageToken;
            } while (next !== '' && items.length < target);
          } else if (more && before.next !== '') {
            const page = await fetchRef.current(before.next, pageSize, ctl.signal);
            items = (before.items ?? []).concat(page.items);
            next = page.nextPageToken;
          } else {
            commit({ ...before, busy: false });
            return;
          }
          if (ctl.signal.aborted || keyRef.current !== k) return;
          commit({ key: k, items, next, error: undefined, busy: false });
        } catch (error) {
          if (ctl.signal.aborted || keyRef.current !== k) return;
          auth.report(error, version);
          const now = stateRef.current.key === k ? stateRef.current : blank;
          commit({ ...now, error, busy: false });
        }
      }),
    [auth, pageSize, maxPageSize],
  );

  useEffect(() => {
    keyRef.current = key;
    controllerRef.current?.abort();
    wantRefresh.current = true;
    wantMore.current = false;
    commit({ key, items: undefined, next: '', error: undefined, busy: true });
    runner.request();
  }, [key, runner]);

  useEffect(() => {
    if (trigger !== null && trigger !== startedTriggerRef.current) {
      wantRefresh.current = true;
      runner.request();
    }
  }, [trigger, runner]);

  useEffect(
    () => () => {
      runner.dispose();
      controllerRef.current?.abort();
    },
    [runner],
  );

  const current: State<T> =
    stateRef.current.key === key ? stateRef.current : { key, items: undefined, next: '', error: undefined, busy: true };
  return {
    items: current.items,
    hasMore: current.next !== '',
    error: current.error,
    busy: current.busy,
    loadMore: () => {
      wantMore.current = true;
      runner.request();
    },
  };
}

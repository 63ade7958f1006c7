import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { createSerialRunner } from './serial-runner.js';
import { useServices } from './services.js';

/** The state of a query that follows live updates. */
export interface LiveQuery<T> {
  /** The last successful result for the current key (kept while refreshing and after a failed refresh). */
  data: T | undefined;
  /** The last failure for the current key, cleared by the next success. */
  error: unknown;
  /** True while a fetch runs. Show "Loading…" only when `data` is also undefined. */
  busy: boolean;
  /** Fetches again (coalesced with any fetch in progress). */
  refresh(): void;
}

interface State<T> {
  key: string;
  data: T | undefined;
  error: unknown;
  busy: boolean;
}

/**
 * Runs `fetcher` for `key`, and again whenever `trigger` differs from its value when the last fetch started.
 * Fetches never overlap: a trigger arriving mid-fetch schedules exactly one more fetch after it. A new `key` aborts
 * the running fetch (its result is dropped) and starts over with no data. `fetcher` may change every render; the
 * latest one is used. Unauthenticated errors go to the auth store (which shows the sign-in form).
 */
export function useLiveQuery<T>(key: string, fetcher: (signal: AbortSignal) => Promise<T>, trigger: string | null): LiveQuery<T> {
  const { auth } = useServices();
  const [state, setState] = useState<State<T>>({ key, data: undefined, error: undefined, busy: true });
  const fetcherRef = useRef(fetcher);
  fetcherRef.current = fetcher;
  const keyRef = useRef(key);
  const triggerRef = useRef(trigger);
  triggerRef.current = trigger;
  const startedTriggerRef = useRef<string | null>(null);
  const controllerRef = useRef<AbortController | null>(null);

  const runner = useMemo(
    () =>
      createSerialRunner(async () => {
        const k = keyRef.current;
        const ctl = new AbortController();
        controllerRef.current = ctl;
        startedTriggerRef.current = triggerRef.current;
        const version = auth.state().version;
        setState((s) => (s.key === k ? { ...s, busy: true } : s));
        try {
          const data = await fetcherRef.current(ctl.signal);
          if (ctl.signal.aborted || keyRef.current !== k) return;
          setState({ key: k, data, error: undefined, busy: false });
        } catch (error) {
          if (ctl.signal.aborted || keyRef.current !== k) return;
          auth.report(error, version);
          setState((s) => ({ key: k, data: s.key === k ? s.data : undefined, error, busy: false }));
        }
      }),
    [auth],
  );

  useEffect(() => {
    keyRef.current = key;
    controllerRef.current?.abort();
    setState({ key, data: undefined, error: undefined, busy: true });
    runner.request();
  }, [key, runner]);

  useEffect(() => {
    if (trigger !== null && trigger !== startedTriggerRef.current) runner.request();
  }, [trigger, runner]);

  useEffect(
    () => () => {
      runner.dispose();
      controllerRef.current?.abort();
    },
    [runner],
  );

  const current = state.key === key ? state : { key, data: undefined, error: undefined, busy: true };
  return { data: current.data, error: current.error, busy: current.busy, refresh: runner.request };
}

import { Code, ConnectError } from '@connectrpc/connect';
import { useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { formatCount } from './format.js';
import { PodLogError, readPodLog } from './pod-log-stream.js';
import { useAuthState, useServices } from './services.js';

/** Lines kept on the page; older ones are dropped as new ones arrive. */
const MAX_LOG_LINES = 5000;

/** How long arriving lines are gathered before they are rendered. */
const FLUSH_MS = 100;

/** The tail lengths offered; 0 stands for the whole log. */
const TAILS = [100, 500, 1000, 0];

type StreamState =
  | { kind: 'reading' }
  | { kind: 'following' }
  | { kind: 'ended'; following: boolean }
  | { kind: 'refused'; status: number; message: string }
  | { kind: 'failed'; message: string };

/** The names of a pod's containers (spec.containers, then spec.initContainers), in order. */
function containerNames(pod: KubernetesObject): string[] {
  const spec = (pod.object?.spec ?? {}) as Record<string, unknown>;
  const names = (list: unknown) =>
    (Array.isArray(list) ? list : [])
      .map((c) => (typeof c === 'object' && c !== null ? (c as { name?: unknown }).name : undefined))
      .filter((n): n is string => typeof n === 'string' && n !== '');
  return [...names(spec.containers), ...names(spec.initContainers)];
}

function statusText(state: StreamState, lines: number, dropped: boolean): string {
  const count = `${formatCount(lines)} line${lines === 1 ? '' : 's'}${dropped ? ` (older lines dropped beyond ${formatCount(MAX_LOG_LINES)})` : ''}`;
  switch (state.kind) {
    case 'reading':
      return 'Reading the log…';
    case 'following':
      return `Following · ${count}`;
    case 'ended':
      return state.following ? `The log stream ended (the container stopped or the pod is gone) · ${count}` : `End of log · ${count}`;
    case 'refused':
      return `Refused (HTTP ${state.status}): ${state.message}`;
    case 'failed':
      return `The log stream failed: ${state.message}`;
  }
}

/**
 * The region "Pod logs" of a Pod's page: its log through the gateway's kube proxy, read as the signed-in caller
 * (who needs the `kube` role for the account; the cluster's RBAC decides the rest). Container, tail length and
 * Follow choose what is read; any change (or a sign-in) stops the running stream and starts a new one, and leaving
 * the page stops it. New lines are appended as they arrive, keeping the last {@link MAX_LOG_LINES}; the view sticks
 * to the bottom unless the reader scrolled up. A refusal shows the Kubernetes Status message.
 */
export function PodLogs({ pod }: { pod: KubernetesObject }) {
  const { auth } = useServices();
  const { version } = useAuthState();
  const containers = containerNames(pod);
  const [container, setContainer] = useState(containers[0] ?? '');
  const [tail, setTail] = useState(100);
  const [follow, setFollow] = useState(true);
  const [restarts, setRestarts] = useState(0);
  const [lines, setLines] = useState<string[]>([]);
  const [dropped, setDropped] = useState(false);
  const [state, setState] = useState<StreamState>({ kind: 'reading' });
  const box = useRef<HTMLPreElement>(null);
  const stick = useRef(true);
  const linesSeen = useRef(0);
  const droppedRef = useRef(false);
  const id = useId();
  const selected = containers.includes(container) ? container : (containers[0] ?? '');

  useEffect(() => {
    if (!selected) return;
    const ctl = new AbortController();
    setLines([]);
    setDropped(false);
    droppedRef.current = false;
    linesSeen.current = 0;
    stick.current = true;
    setState({ kind: follow ? 'following' : 'reading' });
    const request = { account: pod.account, namespace: pod.namespace, pod: pod.name, container: selected, tailLines: tail || null, follow };
    // lines arriving within one flush interval are appended together: one render per batch, not per chunk
    let pending: string[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      timer = undefined;
      if (ctl.signal.aborted || pending.length === 0) return;
      const batch = pending;
      pending = [];
      setLines((prev) => {
        const next = prev.concat(batch);
        return next.length <= MAX_LOG_LINES ? next : next.slice(next.length - MAX_LOG_LINES);
      });
      if (!droppedRef.current && linesSeen.current > MAX_LOG_LINES) {
        droppedRef.current = true;
        setDropped(true);
      }
    };
    readPodLog(
      request,
      { token: auth.token(), csrf: auth.csrf() },
      (batch) => {
        if (ctl.signal.aborted) return;
        linesSeen.current += batch.length;
        for (const line of batch) pending.push(line);
        timer ??= setTimeout(flush, FLUSH_MS);
      },
      ctl.signal,
    ).then(
      () => {
        if (ctl.signal.aborted) return;
        flush();
        setState({ kind: 'ended', following: follow });
      },
      (e: unknown) => {
        if (ctl.signal.aborted) return;
        flush();
        if (e instanceof PodLogError) {
          if (e.status === 401) auth.report(new ConnectError(e.message, Code.Unauthenticated), version);
          setState({ kind: 'refused', status: e.status, message: e.message });
        } else setState({ kind: 'failed', message: e instanceof Error ? e.message : String(e) });
      },
    );
    return () => {
      ctl.abort();
      clearTimeout(timer);
    };
  }, [pod.account, pod.namespace, pod.name, selected, tail, follow, restarts, version, auth]);

  useLayoutEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [lines]);

  const onScroll = () => {
    const el = box.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
  };
  const f = (name: string) => `${id}-${name}`;
  const bad = state.kind === 'refused' || state.kind === 'failed';
  // a log region, named by its container; not announced line by line
  const logRole = { role: 'log', 'aria-live': 'off', 'aria-label': `Log of container ${selected}` } as const;

  return (
    <section class="panel" aria-label="Pod logs">
      <h2>Logs</h2>
      {containers.length === 0 ? (
        <p class="empty">This pod names no containers.</p>
      ) : (
        <>
          <div class="filter log-controls">
            <div class="field">
              <label for={f('container')}>Container</label>
              <select id={f('container')} value={selected} onChange={(e) => setContainer(e.currentTarget.value)}>
                {containers.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for={f('tail')}>Tail</label>
              <select id={f('tail')} value={String(tail)} onChange={(e) => setTail(Number(e.currentTarget.value))}>
                {TAILS.map((n) => (
                  <option key={n} value={String(n)}>
                    {n === 0 ? 'whole log' : `last ${formatCount(n)} lines`}
                  </option>
                ))}
              </select>
            </div>
            <label class="check">
              <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} /> Follow
            </label>
            <button type="button" onClick={() => setRestarts((n) => n + 1)}>
              Reload
            </button>
          </div>
          <p role="status" aria-label="Log stream" class={`outcome ${bad ? 'tone-bad' : ''}`}>
            {statusText(state, lines.length, dropped)}
          </p>
          {
            // biome-ignore lint/a11y/noNoninteractiveTabindex: the log scrolls; keyboard users need to reach it
            <pre class="log" tabIndex={0} ref={box} onScroll={onScroll} {...logRole}>
              {lines.join('\n')}
            </pre>
          }
        </>
      )}
    </section>
  );
}

/**
 * List/watch loop of one watch scope (a kind cluster-wide, or a kind in one namespace), in client-go's vocabulary a
 * reflector that forwards instead of caching:
 *  - no resume point → SyncMarker START, paged list (every item ADDED), SyncMarker END(rv, count), then watch from rv;
 *  - resume point → watch from it directly (no list);
 *  - 410 Gone (HTTP or ERROR event) → full re-list bracketed by markers;
 *  - any other failure or close → watch again from the last seen resourceVersion, with backoff.
 * It reads from the API server only when the outbox is ready (backpressure). It runs until `signal` aborts.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Logger } from 'pino';
import { EventType, SyncPhase } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { WatchScope } from '../kube/access-review.js';
import { KubeHttpError, type KubeClient } from '../kube/kube-client.js';
import { backoffDelayMs, sleep, type BackoffPolicy } from '../stream/backoff.js';
import { OutboxClosedError, type Outbox } from '../stream/outbox.js';
import { scrubObject } from '../../shared/secret-scrub.js';
import { createVersionTracker } from './version-tracker.js';

/** Live state of a scope, read by the status endpoint and progress reports. */
export interface WatchState {
  apiVersion: string;
  kind: string;
  namespace: string;
  state: 'listing' | 'watching' | 'backoff' | 'stopped';
  resourceVersion: string;
  /** Objects listed by the running (or last) full list. */
  listed: number;
  /** True between a list's START and END markers. */
  listInProgress: boolean;
  /** Set when a list finished since the last progress report. */
  listFinished: boolean;
  /** True once the first full list ended, or from the start when resuming: the scope's initial sync is done. */
  synced: boolean;
  /** When this watcher was started (ms since the epoch): unchanged while the same watcher runs. */
  startedAt: number;
}

/** Options of {@link runScopeWatcher}. */
export interface ScopeWatcherOptions {
  account: string;
  client: KubeClient;
  scope: WatchScope;
  outbox: Outbox;
  state: WatchState;
  /** Resume point from the Welcome; absent → start with a full list. */
  resumeResourceVersion?: string;
  pageSize: number;
  backoff: BackoffPolicy;
  logger: Logger;
  signal: AbortSignal;
}

class GoneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GoneError';
  }
}

interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string; continue?: string };
}

/** URL path of the scope's collection. */
function collectionPath(scope: WatchScope): string {
  const { group, version, resource, namespaced } = scope.type;
  const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  return namespaced && scope.namespace !== ''
    ? `${base}/namespaces/${encodeURIComponent(scope.namespace)}/${resource}`
    : `${base}/${resource}`;
}

/** Runs the loop; resolves when `signal` aborts (or the outbox closes). Never rejects. */
export async function runScopeWatcher(options: ScopeWatcherOptions): Promise<void> {
  const { account, client, scope, outbox, state, signal, logger } = options;
  const { apiVersion, kind } = scope.type;
  const path = collectionPath(scope);
  const tracker = createVersionTracker();
  const log = logger.child({ kind, apiVersion, namespace: scope.namespace || undefined });
  let resourceVersion = options.resumeResourceVersion;
  let attempt = 0;

  const eventFor = (type: EventType, object: KubeObject, json: string) => ({
    account,
    type,
    apiVersion,
    kind,
    namespace: object.metadata?.namespace ?? '',
    name: object.metadata?.name ?? '',
    uid: object.metadata?.uid ?? '',
    resourceVersion: object.metadata?.resourceVersion ?? '',
    objectJson: Buffer.from(json),
    watchNamespace: scope.namespace,
  });

  /** Decodes one object: scrubbed immediately, then completed with apiVersion/kind (list items lack them). */
  function decode(raw: KubeObject): { object: KubeObject; json: string } {
    const object = scrubObject(raw, kind);
    object.apiVersion ??= apiVersion;
    object.kind ??= kind;
    return { object, json: JSON.stringify(object) };
  }

  async function list(): Promise<string> {
    state.state = 'listing';
    for (;;) {
      const marker = { account, apiVersion, kind, watchNamespace: scope.namespace };
      outbox.pushMarker({ ...marker, phase: SyncPhase.START });
      tracker.beginList();
      state.listInProgress = true;
      state.listed = 0;
      let token: string | undefined;
      let listRv = '';
      try {
        do {
          await outbox.ready();
          const page = await options.client.getJson<{ metadata?: { resourceVersion?: string; continue?: string }; items?: KubeObject[] }>(
            path,
            { limit: options.pageSize, continue: token },
            signal,
          );
          for (const item of page.items ?? []) {
            const { object, json } = decode(item);
            tracker.recordListed(object.metadata?.namespace ?? '', object.metadata?.name ?? '', object.metadata?.resourceVersion ?? '');
            outbox.pushEvent(eventFor(EventType.ADDED, object, json));
            state.listed++;
          }
          listRv = page.metadata?.resourceVersion ?? listRv;
          token = page.metadata?.continue || undefined;
        } while (token !== undefined);
      } catch (err) {
        if (signal.aborted || err instanceof OutboxClosedError) throw err;
        state.state = 'backoff';
        const delay = backoffDelayMs(options.backoff, attempt++);
        log.warn({ err: (err as Error).message, retryInMs: delay }, 'list failed; re-listing after backoff');
        await sleep(delay, signal);
        state.state = 'listing';
        continue;
      }
      outbox.pushMarker({ ...marker, phase: SyncPhase.END, resourceVersion: listRv, count: BigInt(state.listed) });
      tracker.finishList();
      state.listInProgress = false;
      state.listFinished = true;
      state.synced = true;
      log.info({ listed: state.listed, resourceVersion: listRv }, 'list complete');
      return listRv;
    }
  }

  /** Handles one watch line; returns the resourceVersion it carries. Throws GoneError / Error for ERROR events. */
  function handleLine(line: string): string | undefined {
    let event: { type?: string; object?: KubeObject & { code?: number; message?: string } };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      log.warn('ignoring an undecodable watch line');
      return undefined;
    }
    const raw = event.object ?? {};
    if (event.type === 'ERROR') {
      if (raw.code === 410) throw new GoneError(raw.message ?? 'resourceVersion too old');
      throw new KubeHttpError(raw.code ?? 0, `watch ERROR event: ${raw.message ?? JSON.stringify(raw)}`);
    }
    if (event.type === 'BOOKMARK') {
      const rv = raw.metadata?.resourceVersion ?? '';
      if (rv !== '') {
        outbox.pushEvent({ account, type: EventType.BOOKMARK, apiVersion, kind, resourceVersion: rv, watchNamespace: scope.namespace });
      }
      return rv || undefined;
    }
    const type =
      event.type === 'ADDED'
        ? EventType.ADDED
        : event.type === 'MODIFIED'
          ? EventType.MODIFIED
          : event.type === 'DELETED'
            ? EventType.DELETED
            : undefined;
    if (type === undefined) return undefined;
    const { object, json } = decode(raw);
    const rv = object.metadata?.resourceVersion ?? '';
    if (tracker.acceptEvent(object.metadata?.namespace ?? '', object.metadata?.name ?? '', rv, type === EventType.DELETED))
      outbox.pushEvent(eventFor(type, object, json));
    return rv || undefined;
  }

  async function watch(fromRv: string): Promise<{ resourceVersion: string; events: number }> {
    state.state = 'watching';
    state.resourceVersion = fromRv;
    const timeoutSeconds = 240 + Math.floor(Math.random() * 120);
    const controller = new AbortController();
    const abort = () => controller.abort();
    signal.addEventListener('abort', abort, { once: true });
    let rv = fromRv;
    let events = 0;
    try {
      await outbox.ready();
      let res: Awaited<ReturnType<typeof client.openStream>>;
      try {
        res = await client.openStream(
          path,
          { watch: true, resourceVersion: fromRv, allowWatchBookmarks: true, timeoutSeconds },
          controller.signal,
          (timeoutSeconds + 60) * 1000,
        );
      } catch (err) {
        if (err instanceof KubeHttpError && err.status === 410) throw new GoneError(err.message);
        throw err;
      }
      let buffered = '';
      const decoder = new StringDecoder('utf8');
      for await (const chunk of res) {
        buffered += decoder.write(chunk as Buffer);
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line === '') continue;
          const seen = handleLine(line);
          events++;
          if (seen !== undefined) rv = seen;
        }
        state.resourceVersion = rv;
        // Backpressure: do not pull the next chunk until the window has room.
        if (!outbox.isReady()) await outbox.ready();
      }
      return { resourceVersion: rv, events };
    } catch (err) {
      if (err instanceof GoneError) throw err;
      if (signal.aborted || err instanceof OutboxClosedError) throw err;
      (err as { resumeFrom?: string }).resumeFrom = rv;
      throw err;
    } finally {
      signal.removeEventListener('abort', abort);
      controller.abort();
    }
  }

  try {
    while (!signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          resourceVersion = await list();
          attempt = 0;
        }
        const outcome = await watch(resourceVersion);
        resourceVersion = outcome.resourceVersion;
        if (outcome.events > 0) attempt = 0;
        log.debug({ resourceVersion }, 'watch closed; restarting');
      } catch (err) {
        if (signal.aborted || err instanceof OutboxClosedError) break;
        if (err instanceof GoneError) {
          log.info({ reason: err.message }, 'resourceVersion expired (410 Gone); re-listing');
          resourceVersion = undefined;
          continue;
        }
        const resumeFrom = (err as { resumeFrom?: string }).resumeFrom;
        if (resumeFrom !== undefined) resourceVersion = resumeFrom;
        log.warn({ err: (err as Error).message, resourceVersion }, 'watch failed; restarting from the last seen resourceVersion');
      }
      state.state = 'backoff';
      await sleep(backoffDelayMs(options.backoff, attempt++), signal);
    }
  } finally {
    state.state = 'stopped';
    state.listInProgress = false;
  }
}

/**
 * Watch streams. A watch is a chunked `application/json` response, headers flushed at once, one
 * `{"type","object"}` JSON object per line. It starts from a resourceVersion (replaying the history window; 410 Gone
 * when that version is older than the window), or with synthetic ADDED events for the current state (`0` or absent),
 * sends BOOKMARKs when asked, ends after `timeoutSeconds`, and can be cut from outside (fault injection): cleanly, or
 * with an ERROR 410 event as when etcd compacts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errors, statusObject } from '../errors.js';
import { apiVersionOf, kindKeyOf, type KindInfo } from '../kinds.js';
import type { ObjectStore } from '../store.js';
import type { ChangeType, KubeObject, StoreEvent } from '../types.js';
import type { ObjectFilter } from './selectors.js';
import { objectJson } from './serialize.js';
import { tableOf } from './table.js';
import { partialOf, type View } from './views.js';

/** A slow client holding more than this many unsent bytes is disconnected (it will resume by resourceVersion). */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/** What one watch request asks for. */
interface WatchRequest {
  info: KindInfo;
  version: string;
  namespace?: string;
  filter: ObjectFilter;
  query: URLSearchParams;
  /**
   * How objects (bookmarks included) are sent (views.ts): whole, as one-row Tables (kubectl get -w, with
   * `includeObject`), or as PartialObjectMetadata. A PartialObjectMetadataList cannot be made of one object, so those
   * objects go whole — as kube-apiserver does when a watch's conversion fails. Default: whole.
   */
  view?: View;
  includeObject?: string;
}

/** Every open watch of one sandbox. */
export interface WatchHub {
  /** Serves a watch; throws ApiError (before any byte is written) for a bad or too-old resourceVersion. */
  serve(req: IncomingMessage, res: ServerResponse, request: WatchRequest): void;
  /** Ends every open watch cleanly. */
  closeAll(): void;
  /** Sends every open watch an ERROR 410 event and ends it. */
  expireAll(): void;
  readonly openCount: number;
}

interface OpenWatch {
  close(): void;
  expire(): void;
}

function lineFor(type: ChangeType | 'BOOKMARK' | 'ERROR', objectText: string): string {
  return `{"type":"${type}","object":${objectText}}\n`;
}

/** Creates the hub for a store. */
export function createWatchHub(store: ObjectStore, opts: { bookmarkIntervalMs: number; logger: Logger }): WatchHub {
  const open = new Set<OpenWatch>();

  function serve(_req: IncomingMessage, res: ServerResponse, request: WatchRequest): void {
    const { info, namespace, filter, query } = request;
    const apiVersion = apiVersionOf(info.group, request.version);
    const storageVersion = apiVersionOf(info.group, info.versions[0]!);
    const kindKey = kindKeyOf(info.group, info.kind);
    const rvParam = query.get('resourceVersion') ?? '';
    const bookmarks = query.get('allowWatchBookmarks') === 'true' || query.get('allowWatchBookmarks') === '1';
    const sendInitial = query.get('sendInitialEvents') === 'true';
    const timeoutSeconds = Number(query.get('timeoutSeconds') ?? '0');
    if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 0)
      throw errors.badRequest(`invalid timeoutSeconds: ${query.get('timeoutSeconds')}`);

    const view = request.view?.as ?? 'object';
    const converted = view === 'Table' || view === 'PartialObjectMetadata';
    const convertedText = (obj: KubeObject) =>
      JSON.stringify(
        view === 'Table'
          ? tableOf(info, [obj], { resourceVersion: obj.metadata.resourceVersion }, request.includeObject ?? '', apiVersion)
          : partialOf(obj, request.view && 'version' in request.view ? request.view.version : 'v1'),
      );
    const visible = (obj: KubeObject) => (!namespace || obj.metadata.namespace === namespace) && (!filter || filter(obj));
    let initial: KubeObject[] = [];
    let replay: StoreEvent[] = [];
    if (rvParam === '' || rvParam === '0' || sendInitial) {
      initial = store.scan(info, { namespace, filter }).items;
      if (rvParam !== '' && rvParam !== '0' && !/^\d+$/.test(rvParam)) throw errors.badRequest(`invalid resourceVersion: ${rvParam}`);
    } else {
      if (!/^\d+$/.test(rvParam)) throw errors.badRequest(`invalid resourceVersion: ${rvParam}`);
      const rv = Number(rvParam);
      const events = store.eventsSince(rv);
      if (!events) throw errors.gone(`too old resource version: ${rv} (${store.compactedRv + 1})`);
      replay = events;
    }

    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
    let closed = false;
    const write = (line: string) => {
      if (closed) return;
      res.write(line);
      if (res.writableLength > MAX_BUFFERED_BYTES) {
        opts.logger.warn({ kind: info.kind }, 'closing a watch whose client does not keep up');
        close();
      }
    };
    const deliver = (event: StoreEvent) => {
      if (event.kindKey !== kindKey) return;
      const obj = event.object;
      if (namespace && obj.metadata.namespace !== namespace) return;
      let type: ChangeType = event.type;
      if (filter) {
        const now = filter(obj);
        const before = event.oldObject ? filter(event.oldObject) : false;
        if (event.type === 'ADDED') {
          if (!now) return;
        } else if (event.type === 'MODIFIED') {
          if (now && !before) type = 'ADDED';
          else if (!now && before) type = 'DELETED';
          else if (!now) return;
        } else if (!now && !before) return;
      }
      if (converted) {
        write(lineFor(type, convertedText(obj)));
      } else if (type === event.type && apiVersion === storageVersion) {
        event.line ??= lineFor(event.type, objectJson(obj));
        write(event.line);
      } else {
        write(lineFor(type, objectJson(obj, apiVersion)));
      }
    };
    const bookmark = (annotations?: Record<string, string>) => {
      const meta: Record<string, unknown> = { resourceVersion: String(store.resourceVersion) };
      if (annotations) meta.annotations = annotations;
      const object = { kind: info.kind, apiVersion, metadata: meta } as unknown as KubeObject;
      write(lineFor('BOOKMARK', converted ? convertedText(object) : JSON.stringify(object)));
    };

    const unsubscribe = store.subscribe(deliver);
    const timers: NodeJS.Timeout[] = [];
    const watch: OpenWatch = {
      close: () => close(),
      expire: () => {
        write(lineFor('ERROR', JSON.stringify(statusObject(410, 'Expired', 'The resourceVersion for the provided watch is too old.'))));
        close();
      },
    };
    function close(): void {
      if (closed) return;
      closed = true;
      unsubscribe();
      for (const t of timers) clearTimeout(t);
      open.delete(watch);
      res.end();
    }
    open.add(watch);
    // the response closes when the client goes away (or when we end it)
    res.on('close', close);

    for (const obj of initial) write(lineFor('ADDED', converted ? convertedText(obj) : objectJson(obj, apiVersion)));
    if (sendInitial && bookmarks) bookmark({ 'k8s.io/initial-events-end': 'true' });
    for (const event of replay) {
      if (visible(event.object) || (event.oldObject && visible(event.oldObject))) deliver(event);
    }
    if (bookmarks && opts.bookmarkIntervalMs > 0) {
      const timer = setInterval(() => bookmark(), opts.bookmarkIntervalMs);
      timer.unref();
      timers.push(timer);
    }
    if (timeoutSeconds > 0) {
      // a Node timer longer than 2^31-1 ms fires after 1 ms: a timeout of years would end the watch at once
      const timer = setTimeout(close, Math.min(timeoutSeconds * 1000, 2 ** 31 - 1));
      timer.unref();
      timers.push(timer);
    }
  }

  return {
    serve,
    closeAll() {
      for (const w of [...open]) w.close();
    },
    expireAll() {
      for (const w of [...open]) w.expire();
    },
    get openCount() {
      return open.size;
    },
  };
}

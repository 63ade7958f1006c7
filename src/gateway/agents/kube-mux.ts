/**
 * The Kubernetes API requests of one agent stream, on the gateway (docs/agent-protocol.md, "Kubernetes API
 * requests"): numbers them, sends their KubeRequest parts on the stream and routes the agent's KubeResponse parts to
 * them by id. When the stream ends every open request hears an `unavailable` end at once, so no caller waits on a
 * stream that is gone.
 */
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import {
  KubeRequestSchema,
  type KubeResponse,
  type KubeResponseEnd,
  type KubeResponseHead,
  type KubeRequest,
} from '../../gen/outpost/agent/v1/kube_pb.js';

/** What a request hears from its agent. */
export interface KubeChannelEvents {
  head(head: KubeResponseHead): void;
  body(chunk: Uint8Array): void;
  /** The agent granted more request body credit. */
  window(bytes: number): void;
  /** The answer ended (`error` set when abnormally), or the stream went away. Nothing follows. */
  end(end: Pick<KubeResponseEnd, 'error' | 'code'>): void;
}

/** A part of a request, as sent. */
export type KubeRequestPart = MessageInitShape<typeof KubeRequestSchema>['part'];

/** One open request. */
export interface KubeChannel {
  readonly id: bigint;
  /** Sends a part; false when the stream can no longer send (the request then hears an end shortly). */
  send(part: KubeRequestPart): boolean;
  /** Forgets the request (after its end, or after sending a cancel): later parts for its id are dropped. */
  close(): void;
}

/** See the module comment. */
export interface KubeMux {
  /** Opens a request; undefined when the stream cannot take one (not welcomed yet, or ending). */
  open(events: KubeChannelEvents): KubeChannel | undefined;
  /** Routes one part from the agent. */
  received(response: KubeResponse): void;
  /** Ends every open request with `reason` (the stream ended); later opens fail. */
  closeAll(reason: string): void;
  /** Requests open now. */
  active(): number;
}

/** Creates the mux; `send` writes one message on the stream, false when it no longer can. */
export function createKubeMux(send: (request: KubeRequest) => boolean): KubeMux {
  const open = new Map<bigint, KubeChannelEvents>();
  let nextId = 1n;
  let closed = false;
  return {
    open(events) {
      if (closed) return undefined;
      const id = nextId++;
      open.set(id, events);
      return {
        id,
        send: (part) => !closed && open.has(id) && send(create(KubeRequestSchema, { id, part })),
        close: () => void open.delete(id),
      };
    },
    received(response) {
      const events = open.get(response.id);
      if (!events) return;
      const part = response.part;
      switch (part.case) {
        case 'head':
          return events.head(part.value);
        case 'body':
          return events.body(part.value);
        case 'window':
          return events.window(part.value.bytes);
        case 'end':
          open.delete(response.id);
          return events.end(part.value);
        default:
          return;
      }
    },
    closeAll(reason) {
      closed = true;
      const all = [...open.values()];
      open.clear();
      for (const events of all) events.end({ error: reason, code: 'unavailable' });
    },
    active: () => open.size,
  };
}

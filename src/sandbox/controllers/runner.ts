/**
 * A tiny controller runtime: each controller maps store events to keys (synchronously, in the store's listener) and
 * reconciles keys later from a de-duplicated queue, so controllers never write while the store is still notifying
 * (which would reorder watch events). Conflicts and other failures are retried after a short delay.
 */
import type { Logger } from 'pino';
import { ApiError } from '../errors.js';
import type { ObjectStore } from '../store.js';
import type { StoreEvent } from '../types.js';

/** One controller. */
export interface Controller {
  readonly name: string;
  /** Keys to reconcile because of this event; must not write to the store. */
  keysFor(event: StoreEvent): Iterable<string>;
  /** Brings the world in line for one key; may write to the store. */
  reconcile(key: string): void;
}

/** Handle on running controllers. */
export interface ControllerRunner {
  /** Queues a key for a controller by name (for timers inside controllers). */
  enqueue(controller: string, key: string, delayMs?: number): void;
  /** Resolves when no work is queued (timers pending later are not waited for). */
  idle(): Promise<void>;
  stop(): void;
}

const RETRY_MS = 25;
const MAX_ATTEMPTS = 20;
/**
 * The longest delay a Node timer takes: a longer one (a progress deadline or pod run time of years, from a manifest)
 * fires after 1 ms instead, and a controller that asks again each time would spin. Such keys are looked at every
 * 24.8 days instead.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Subscribes the controllers to the store and starts processing. */
export function startControllers(store: ObjectStore, controllers: Controller[], logger: Logger): ControllerRunner {
  const byName = new Map(controllers.map((c) => [c.name, c]));
  const queue = new Map<string, { controller: Controller; key: string }>();
  const attempts = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let scheduled = false;
  let stopped = false;
  let idleWaiters: (() => void)[] = [];

  const schedule = () => {
    if (scheduled || stopped) return;
    scheduled = true;
    setImmediate(drain);
  };

  const add = (controller: Controller, key: string) => {
    queue.set(`${controller.name}\u0000${key}`, { controller, key });
    schedule();
  };

  function drain(): void {
    scheduled = false;
    if (stopped) return;
    const batch = [...queue.entries()];
    queue.clear();
    for (const [id, { controller, key }] of batch) {
      try {
        controller.reconcile(key);
        attempts.delete(id);
      } catch (err) {
        const n = (attempts.get(id) ?? 0) + 1;
        attempts.set(id, n);
        const expected = err instanceof ApiError && (err.code === 409 || err.code === 404);
        if (!expected) logger.warn({ err, controller: controller.name, key }, 'sandbox controller failed');
        if (n < MAX_ATTEMPTS) later(controller, key, RETRY_MS * Math.min(n, 10));
        else attempts.delete(id);
      }
    }
    if (queue.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  function later(controller: Controller, key: string, delayMs: number): void {
    if (stopped) return;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        add(controller, key);
      },
      Math.min(delayMs, MAX_TIMER_MS),
    );
    timer.unref();
    timers.add(timer);
  }

  const unsubscribe = store.subscribe((event) => {
    for (const controller of controllers) {
      for (const key of controller.keysFor(event)) add(controller, key);
    }
  });

  return {
    enqueue(name, key, delayMs = 0) {
      const controller = byName.get(name);
      if (!controller) throw new Error(`no controller named ${name}`);
      if (delayMs > 0) later(controller, key, delayMs);
      else add(controller, key);
    },
    idle() {
      if (queue.size === 0 && !scheduled) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    stop() {
      stopped = true;
      unsubscribe();
      for (const t of timers) clearTimeout(t);
      timers.clear();
      queue.clear();
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    },
  };
}

/** `namespace/name` key helpers. */
export function nsKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/** Splits a key from {@link nsKey}. */
export function splitNsKey(key: string): { namespace: string | undefined; name: string } {
  const i = key.indexOf('/');
  const ns = key.slice(0, i);
  return { namespace: ns || undefined, name: key.slice(i + 1) };
}

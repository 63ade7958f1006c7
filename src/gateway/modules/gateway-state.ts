/**
 * What a running gateway says about itself, owned in one place: whether it drains, and the URL clients and replicas
 * reach it at. Health, `/armory/clouddrivers`, the fleet summary and the replica directory read it; the composition
 * writes it — the URL once the ports are bound, the drain as the first step of shutdown.
 */
import type { Logger } from '../../shared/logger.js';

/** The gateway's own state. Reads are cheap and synchronous: call them on every request. */
export interface GatewayState {
  /** True once shutdown began (health 503 / NOT_SERVING, this replica listed not ready). Never turns back. */
  isDraining(): boolean;
  /** The URL clients and replicas reach this replica at: `baseUrl` of the config, else the bound HTTP URL ('' before). */
  baseUrl(): string;
  /** Takes the bound HTTP URL as the base URL unless the config set one. Called once, when the ports are bound. */
  listeningAt(httpUrl: string): void;
  /**
   * Adds something to do when the drain begins (health turns NOT_SERVING, the replica row says not ready). Run in the
   * order added, each awaited; a rejection is the listener's to catch.
   */
  onDrain(listener: () => unknown): void;
  /** Begins the drain: the state turns draining at once, then the listeners run. Idempotent. */
  drain(): Promise<void>;
}

/** Creates the state of one gateway; `configuredBaseUrl` is `config.baseUrl`. */
export function createGatewayState(configuredBaseUrl: string | undefined, logger: Logger): GatewayState {
  let draining = false;
  let baseUrl = configuredBaseUrl ?? '';
  let drained: Promise<void> | undefined;
  const listeners: (() => unknown)[] = [];
  return {
    isDraining: () => draining,
    baseUrl: () => baseUrl,
    listeningAt(httpUrl) {
      if (!baseUrl) baseUrl = httpUrl;
    },
    onDrain(listener) {
      listeners.push(listener);
    },
    drain() {
      drained ??= (async () => {
        draining = true;
        logger.info('gateway shutting down');
        for (const listener of listeners) await listener();
      })();
      return drained;
    },
  };
}

/**
 * How every long-running command (`gateway`, `agent`, `sandbox`, `demo`) waits to be stopped: until the process gets
 * SIGINT or SIGTERM, once. The listeners are removed as soon as one arrives, so a second signal gets Node's default
 * handling (the process ends at once) while the command shuts down.
 */

/** Resolves with the first SIGINT or SIGTERM the process receives. */
export function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/**
 * A fixed-size pool for suites that send many independent requests (hostile inputs, authorization cells): at most
 * `limit` in flight, results in item order.
 */

/** Runs `work` over `items` with at most `limit` in flight; results in item order. `work` should not throw. */
export async function runPool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Races a promise against a timer, for checks that must answer in bounded time (health checks pinging the database):
 * rejects with "timed out after N ms" when the promise takes longer. The promise itself is not cancelled; its late
 * result is ignored.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

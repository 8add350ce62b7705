/**
 * `items.map(fn)` with at most `limit` calls in flight, results in input order. Object
 * stores answer one small GET in tens of milliseconds, so reading many objects is only
 * fast in parallel — and only polite with a bound. A slow call holds one slot, not a whole
 * batch of them, as chunks of `limit` awaited in turn would.
 */
export const mapLimit = async <T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> => {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        results[i] = await fn(items[i] as T);
      } catch (error) {
        // One failure fails the whole map; stop starting new calls that nobody will read.
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
};

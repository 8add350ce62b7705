/**
 * Wait for a crash loop's kill: until `answered()` holds (the cycle's first acknowledged write),
 * at most `patienceMs`, then a random `minMs` to `minMs + spreadMs` more. The random moment
 * counts from that first answer because on a loaded host a freshly started server's first
 * writes can take longer than the whole window (its warm-up, an S3 batch), and a kill before
 * anything was acknowledged checks nothing.
 */
export const killMoment = async (answered: () => boolean, minMs: number, spreadMs: number, patienceMs = 30_000): Promise<void> => {
  for (const until = Date.now() + patienceMs; !answered() && Date.now() < until; ) await sleep(10);
  await sleep(minMs + Math.random() * spreadMs);
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

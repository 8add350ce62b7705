/**
 * Independent store calls of a compile (digest, pattern and trace records, link writes, path
 * reads) kept in flight a few at once instead of waited on one after another: on PostgreSQL
 * and S3 each is a round trip, and a catch-up makes thousands.
 *
 * `run` starts a piece of work once fewer than `limit` are out; `then` callbacks (events to
 * publish) are called in the order the work was started, each once its work and all started
 * before it are done. After a failure nothing more starts: `run` and `settle` throw the first
 * failure once every piece started has settled, and the `then` of the failed piece and of all
 * started after it are not called.
 */
export class Bounded {
  private readonly limit: number;
  private readonly out = new Set<Promise<void>>();
  private readonly order: Array<{ state: 'running' | 'done' | 'failed'; then: () => void }> = [];
  private failure: { error: unknown } | null = null;

  constructor(limit: number) {
    this.limit = Math.max(1, limit);
  }

  async run<R>(work: () => Promise<R>, then?: (result: R) => void): Promise<void> {
    while (this.out.size >= this.limit && !this.failure) await Promise.race(this.out);
    if (this.failure) return this.settle();
    const slot: { state: 'running' | 'done' | 'failed'; then: () => void } = { state: 'running', then: () => {} };
    this.order.push(slot);
    const p = work().then(
      (result) => {
        slot.state = 'done';
        if (then) slot.then = () => then(result);
        this.release();
      },
      (error: unknown) => {
        slot.state = 'failed';
        this.failure ??= { error };
      },
    );
    const tracked = p.finally(() => this.out.delete(tracked));
    this.out.add(tracked);
  }

  /** Waits for every piece started; throws the first failure. */
  async settle(): Promise<void> {
    while (this.out.size > 0) await Promise.all(this.out);
    if (this.failure) throw this.failure.error;
  }

  get failed(): boolean {
    return this.failure !== null;
  }

  private release(): void {
    while (this.order[0]?.state === 'done') (this.order.shift() as { then: () => void }).then();
  }
}

/**
 * `read` of each item, up to `ahead` of them started before their turn, answered in order.
 * A read started ahead and never asked for (the caller stopped) is let go, its failure ignored.
 */
export async function* readAhead<T, R>(items: readonly T[], ahead: number, read: (item: T) => Promise<R>): AsyncGenerator<[T, R]> {
  const started: Promise<R>[] = [];
  const start = (i: number): void => {
    if (i < items.length && started[i] === undefined) {
      const p = read(items[i] as T);
      p.catch(() => {});
      started[i] = p;
    }
  };
  for (let i = 0; i < items.length; i++) {
    for (let j = i; j < Math.min(items.length, i + Math.max(1, ahead)); j++) start(j);
    const value = await (started[i] as Promise<R>);
    delete started[i];
    yield [items[i] as T, value];
  }
}

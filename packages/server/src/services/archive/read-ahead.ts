/**
 * What readAhead needs to know of the items it reads: how to read an item (its chunks, in
 * order: an entry's history pages), how large a chunk is, and a guess at how large one will be
 * before it is read.
 */
export interface ReadAheadParts<T, C> {
  open: (item: T) => AsyncIterator<C>;
  size: (chunk: C) => number;
  guess: (item: T) => number;
}

export interface ReadAheadLimits {
  /** Items being read at once, the one being consumed included. */
  items: number;
  /**
   * Size (as `parts.size` counts it) of the chunks read and not yet consumed, with the guesses
   * for chunks being read: past it, no read starts but the consumed item's next chunk.
   */
  size: number;
}

interface Slot<T, C> {
  item: T;
  source: AsyncIterator<C>;
  guess: number;
  /** A chunk read and not yet consumed: at most one a slot. */
  ready: C[];
  reading: boolean;
  done: boolean;
  failure: { error: unknown } | null;
  wake: (() => void) | null;
}

/**
 * `items` in their order, each with its chunks in theirs, exactly as reading them one after
 * another would give them, but with up to `limits.items` items read at once: a store answering
 * each read in tens of milliseconds (S3) is then not waited on item after item. Each item read
 * ahead holds at most one chunk not yet consumed, and no read ahead starts while the chunks held
 * pass `limits.size`; the item being consumed always reads on, so the consumer never waits on
 * the bound. A failure reading an item is thrown when the consumer reaches it (reading its
 * chunks), a failure of `items` after the items before it: where reading them in turn would
 * have thrown. The consumer reads each item's chunks to the end (or stops altogether) before it
 * asks for the next item; when it stops, the reads in flight are dropped.
 */
export const readAhead = async function* <T, C>(
  items: AsyncIterable<T>,
  parts: ReadAheadParts<T, C>,
  limits: ReadAheadLimits,
): AsyncGenerator<{ item: T; chunks: AsyncIterable<C> }> {
  const window: Slot<T, C>[] = [];
  let held = 0;
  const upstream = items[Symbol.asyncIterator]();
  let pulling = false;
  let exhausted = false;
  let upstreamFailure: { error: unknown } | null = null;
  let closed = false;
  let wakeConsumer: (() => void) | null = null;

  const wake = (slot: Slot<T, C>): void => {
    const resolve = slot.wake;
    slot.wake = null;
    resolve?.();
  };
  const read = (slot: Slot<T, C>, front: boolean): void => {
    if (closed || slot.reading || slot.done || slot.failure !== null || slot.ready.length > 0) return;
    if (!front && held > 0 && held + slot.guess > limits.size) return;
    slot.reading = true;
    held += slot.guess;
    slot.source.next().then(
      (result) => {
        held -= slot.guess;
        slot.reading = false;
        if (result.done) slot.done = true;
        else {
          slot.ready.push(result.value);
          held += parts.size(result.value);
        }
        wake(slot);
        kick();
      },
      (error: unknown) => {
        held -= slot.guess;
        slot.reading = false;
        slot.failure = { error };
        wake(slot);
        kick();
      },
    );
  };
  const pull = (): void => {
    pulling = true;
    upstream.next().then(
      (result) => {
        pulling = false;
        if (result.done) exhausted = true;
        else if (!closed) {
          const slot: Slot<T, C> = { item: result.value, source: null as never, guess: 0, ready: [], reading: false, done: false, failure: null, wake: null };
          try {
            slot.source = parts.open(result.value);
            slot.guess = parts.guess(result.value);
          } catch (error) {
            slot.failure = { error };
          }
          window.push(slot);
        }
        const resolve = wakeConsumer;
        wakeConsumer = null;
        resolve?.();
        kick();
      },
      (error: unknown) => {
        pulling = false;
        upstreamFailure = { error };
        const resolve = wakeConsumer;
        wakeConsumer = null;
        resolve?.();
      },
    );
  };
  /** Starts every read the limits allow. */
  const kick = (): void => {
    if (closed) return;
    window.forEach((slot, i) => read(slot, i === 0));
    if (!pulling && !exhausted && upstreamFailure === null && (window.length === 0 || (window.length < limits.items && held < limits.size))) pull();
  };
  const chunksOf = async function* (slot: Slot<T, C>): AsyncGenerator<C> {
    for (;;) {
      const chunk = slot.ready.shift();
      if (chunk !== undefined) {
        held -= parts.size(chunk);
        kick();
        yield chunk;
        continue;
      }
      if (slot.failure !== null) throw slot.failure.error;
      if (slot.done) return;
      read(slot, true);
      await new Promise<void>((resolve) => {
        slot.wake = resolve;
      });
    }
  };
  const drop = (slot: Slot<T, C>): void => {
    for (const chunk of slot.ready.splice(0)) held -= parts.size(chunk);
    if (!slot.done && slot.failure === null) slot.source?.return?.()?.catch(() => {});
  };

  try {
    kick();
    for (;;) {
      while (window.length === 0 && !exhausted && upstreamFailure === null) {
        await new Promise<void>((resolve) => {
          wakeConsumer = resolve;
        });
      }
      const slot = window[0];
      if (slot === undefined) {
        if (upstreamFailure !== null) throw (upstreamFailure as { error: unknown }).error;
        return;
      }
      yield { item: slot.item, chunks: chunksOf(slot) };
      window.shift();
      drop(slot);
      kick();
    }
  } finally {
    closed = true;
    for (const slot of window.splice(0)) drop(slot);
    void upstream.return?.()?.catch(() => {});
  }
};

/**
 * readAhead's answer read one item after another, nothing ahead: where a read costs no round
 * trip, the machinery of reading ahead costs more than it saves.
 */
export const inTurn = async function* <T, C>(items: AsyncIterable<T>, parts: Pick<ReadAheadParts<T, C>, 'open'>): AsyncGenerator<{ item: T; chunks: AsyncIterable<C> }> {
  for await (const item of items) {
    const source = parts.open(item);
    yield { item, chunks: { [Symbol.asyncIterator]: () => source } };
  }
};

/** A scope waiting to be compiled: one entity path in one namespace. */
export interface PendingScope {
  namespace: string;
  entityPath: string;
}

interface Pending extends PendingScope {
  /** When the first write since the last compile arrived. */
  first: number;
  /** When the latest write arrived. */
  last: number;
  /** Not due before this (epoch ms): a path whose compile failed waits out its own retry delay. */
  notBefore?: number;
  /** When it is due (see dueAt), kept as it changes (NaN until first set). */
  due: number;
}

/** A scope's due time as it was when set; stale once the scope is taken or its due time moves. */
interface Mark {
  due: number;
  id: string;
}

/**
 * Per-scope debounce: a scope is due `debounceMs` after its latest write, so a burst of
 * writes to one scope compiles it once. A scope written without pause is still compiled
 * every `maxWaitMs`, so a steady stream cannot starve its digest.
 */
export class ScopeQueue {
  private readonly pending = new Map<string, Pending>();
  /**
   * Min-heap of due times, so the next due time is known without a walk of every pending
   * scope on each write. A mark is pushed whenever a scope's due time is set; marks gone
   * stale are dropped as they reach the top, and the heap is rebuilt when they outnumber the
   * scopes.
   */
  private heap: Mark[] = [];
  private readonly debounceMs: number;
  private readonly maxWaitMs: number;

  constructor(debounceMs: number, maxWaitMs = Math.max(1000, debounceMs * 10)) {
    this.debounceMs = debounceMs;
    this.maxWaitMs = maxWaitMs;
  }

  /**
   * A write (or a retry) at `at`. `notBefore`: the scope is not due before then, whatever its
   * writes (a failing path's retry delay); later writes keep it.
   */
  touch(namespace: string, entityPath: string, at: number, notBefore?: number): void {
    const id = `${namespace}\u0000${entityPath}`;
    const known = this.pending.get(id);
    if (known) {
      known.last = at;
      if (notBefore !== undefined) known.notBefore = Math.max(known.notBefore ?? notBefore, notBefore);
      this.mark(id, known);
    } else {
      const p: Pending = { namespace, entityPath, first: at, last: at, ...(notBefore === undefined ? {} : { notBefore }), due: Number.NaN };
      this.pending.set(id, p);
      this.mark(id, p);
    }
  }

  /** Drop a scope's retry delay (it compiled after all): it is due on its writes' clock again. */
  release(namespace: string, entityPath: string): void {
    const id = `${namespace}\u0000${entityPath}`;
    const p = this.pending.get(id);
    if (!p || p.notBefore === undefined) return;
    delete p.notBefore;
    this.mark(id, p);
  }

  /** Set a scope's due time after a change, marking it in the heap when it moved. */
  private mark(id: string, p: Pending): void {
    const due = this.dueAt(p);
    if (due === p.due) return;
    p.due = due;
    if (this.heap.length > 2 * this.pending.size + 1024) this.rebuild();
    else this.push({ due, id });
  }

  private live(m: Mark): boolean {
    return this.pending.get(m.id)?.due === m.due;
  }

  private rebuild(): void {
    this.heap = [];
    for (const [id, p] of this.pending) this.push({ due: p.due, id });
  }

  private push(m: Mark): void {
    const h = this.heap;
    let i = h.push(m) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((h[parent] as Mark).due <= m.due) break;
      h[i] = h[parent] as Mark;
      i = parent;
    }
    h[i] = m;
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop() as Mark;
    if (h.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c = r < h.length && (h[r] as Mark).due < (h[l] as Mark).due ? r : l;
      if ((h[c] as Mark).due >= last.due) break;
      h[i] = h[c] as Mark;
      i = c;
    }
    h[i] = last;
  }

  private dueAt(p: Pending): number {
    return Math.max(p.notBefore ?? Number.NEGATIVE_INFINITY, Math.min(p.last + this.debounceMs, p.first + this.maxWaitMs));
  }

  /** Scopes due at `now`, removed from the queue, with when their first waiting write came. */
  takeDue(now: number): Array<PendingScope & { first: number }> {
    const due: Array<PendingScope & { first: number }> = [];
    for (const [id, p] of this.pending) {
      if (this.dueAt(p) > now) continue;
      this.pending.delete(id);
      due.push({ namespace: p.namespace, entityPath: p.entityPath, first: p.first });
    }
    return due;
  }

  /** Milliseconds until the next scope is due, or null when nothing waits. */
  nextDueIn(now: number): number | null {
    while (this.heap.length > 0 && !this.live(this.heap[0] as Mark)) this.pop();
    const top = this.heap[0];
    return top === undefined ? null : Math.max(0, top.due - now);
  }

  /** How long the oldest uncompiled write has waited (the Cortex's lag). */
  oldestWaitMs(now: number): number {
    let oldest = now;
    for (const p of this.pending.values()) oldest = Math.min(oldest, p.first);
    return now - oldest;
  }

  get size(): number {
    return this.pending.size;
  }

  clear(): void {
    this.pending.clear();
    this.heap = [];
  }
}

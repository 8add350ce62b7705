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
}

/**
 * Per-scope debounce: a scope is due `debounceMs` after its latest write, so a burst of
 * writes to one scope compiles it once. A scope written without pause is still compiled
 * every `maxWaitMs`, so a steady stream cannot starve its digest.
 */
export class ScopeQueue {
  private readonly pending = new Map<string, Pending>();
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
    } else this.pending.set(id, { namespace, entityPath, first: at, last: at, ...(notBefore === undefined ? {} : { notBefore }) });
  }

  /** Drop a scope's retry delay (it compiled after all): it is due on its writes' clock again. */
  release(namespace: string, entityPath: string): void {
    delete this.pending.get(`${namespace}\u0000${entityPath}`)?.notBefore;
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
    let next: number | null = null;
    for (const p of this.pending.values()) next = Math.min(next ?? Number.POSITIVE_INFINITY, this.dueAt(p));
    return next === null ? null : Math.max(0, next - now);
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
  }
}

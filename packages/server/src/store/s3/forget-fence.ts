import type { EntryAddress } from '../../domain/entry.ts';
import { forgetNames } from '../../domain/forget-target.ts';
import type { ForgetTarget } from '../../ports/store.ts';

interface Running<T> {
  what: T;
  done: Promise<void>;
}

/**
 * Keeps this replica's appends and forgets of the same entries apart. On an object store a
 * forget is many steps (drop the heads, delete every version object, scrub the change log);
 * an append under its target racing those steps could put a version back after its heads were
 * dropped, or have its new version deleted while its head stays in memory, so that this
 * replica served what the bucket no longer holds. A forget waits for the appends under its
 * target that are under way, and appends under it wait for the forget; other entries never wait.
 * (Other replicas' appends race a forget as they race each other: through the bucket.)
 */
export class ForgetFence {
  private readonly appends = new Set<Running<readonly EntryAddress[]>>();
  private readonly forgets = new Set<Running<ForgetTarget>>();

  /** Run an append of `addresses` once no forget under way names one of them. */
  async append<T>(addresses: readonly EntryAddress[], work: () => Promise<T>): Promise<T> {
    const named = (target: ForgetTarget) => addresses.some((a) => forgetNames(target, a));
    for (let blocking = this.running(this.forgets, named); blocking.length > 0; blocking = this.running(this.forgets, named)) {
      await Promise.all(blocking);
    }
    return this.hold(this.appends, addresses, work);
  }

  /** Run a forget of `target` once the appends under way that it names have finished. */
  async forget<T>(target: ForgetTarget, work: () => Promise<T>): Promise<T> {
    return this.hold(this.forgets, target, async () => {
      await Promise.all(this.running(this.appends, (addresses) => addresses.some((a) => forgetNames(target, a))));
      return work();
    });
  }

  private running<W>(set: Set<Running<W>>, matches: (what: W) => boolean): Promise<void>[] {
    return [...set].filter((r) => matches(r.what)).map((r) => r.done);
  }

  private async hold<W, T>(set: Set<Running<W>>, what: W, work: () => Promise<T>): Promise<T> {
    let finish: () => void = () => {};
    const running = { what, done: new Promise<void>((resolve) => (finish = resolve)) };
    set.add(running);
    try {
      return await work();
    } finally {
      set.delete(running);
      finish();
    }
  }
}

import type { EntryAddress } from '../../domain/entry.ts';
import { forgetNames } from '../../domain/forget-target.ts';
import type { ForgetTarget } from '../../ports/store.ts';

/** Forgets remembered; far more than can be heard while one version is read and announced. */
const CAPACITY = 1024;

/**
 * The forgets this process has heard of lately, numbered. A version read from the database (or
 * returned by this process's own append) before a forget committed, but announced after the
 * forget was, must not be announced at all: a subscriber that keeps copies (an in-process
 * search index) would keep what was forgotten. Take a `mark` before the read, and ask
 * `namesSince(mark, entry)` before announcing.
 */
export class ForgetMarks {
  private count = 0;
  private readonly recent: { n: number; target: ForgetTarget }[] = [];

  mark(): number {
    return this.count;
  }

  note(target: ForgetTarget): void {
    this.count += 1;
    this.recent.push({ n: this.count, target });
    if (this.recent.length > CAPACITY) this.recent.shift();
  }

  /**
   * Whether a forget heard after `mark` names `entry`. When more forgets than are remembered
   * came since, the answer is yes: a version not announced is found again at the next start,
   * where a forgotten one announced would stay found.
   */
  namesSince(mark: number, entry: EntryAddress): boolean {
    if (mark === this.count) return false;
    const oldest = this.recent[0]?.n ?? this.count + 1;
    if (oldest > mark + 1) return true;
    for (let i = this.recent.length - 1; i >= 0; i--) {
      const item = this.recent[i] as { n: number; target: ForgetTarget };
      if (item.n <= mark) break;
      if (forgetNames(item.target, entry)) return true;
    }
    return false;
  }
}

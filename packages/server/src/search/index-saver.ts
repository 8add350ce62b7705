import { saveSnapshot, type IndexParts } from './index-persistence.ts';
import type { SnapshotFile } from './index-snapshot.ts';

/**
 * Changes (documents and vectors) since the last save that start a new one, at the least.
 * Above it the trigger is half the documents held: a write counts twice (its document, then
 * its vector), so a save, which writes every document, follows every quarter of the index's
 * size in writes (four documents saved per one written), and a crash leaves at most that many
 * writes to index again at the next start. A trigger of a quarter (a save every eighth) kept a
 * server under a steady write load saving nearly all the time: updates of 100k entries at 50
 * connections measured 8.5–9.5k writes/s with it, 10.9–11.2k with a half.
 */
export const SAVE_AFTER_CHANGES = 10_000;
const SAVE_AFTER_SHARE = 0.5;
/** A long embedding backlog (start-up, a changed embedder) is let finish before saving. */
const SAVE_WHILE_EMBEDDINGS_BELOW = 2_000;
/** How long a shutdown waits for the index to be saved (about a million entries' worth). */
const CLOSE_SAVE_MS = 10_000;

/** When the in-process index is saved: in the background as it changes, and at shutdown. */
export class IndexSaver {
  private readonly parts: IndexParts;
  private readonly file: SnapshotFile;
  private changes = 0;
  /** When the changes now counted began to pile up: the last save, or skip, or the start. */
  private countingSince = performance.now();
  private pending: Promise<void> | null = null;

  constructor(parts: IndexParts, file: SnapshotFile) {
    this.parts = parts;
    this.file = file;
  }

  /** Whether a save is under way. */
  get saving(): boolean {
    return this.pending !== null;
  }

  /** Count changes; save in the background once the index is `ready`, enough piled up and embedding caught up. */
  changed(count: number, ready: boolean): void {
    this.changes += count;
    if (this.pending || !ready) return;
    if (this.changes < Math.max(SAVE_AFTER_CHANGES, this.parts.text.docCount * SAVE_AFTER_SHARE)) return;
    if ((this.parts.queue?.pending ?? 0) >= SAVE_WHILE_EMBEDDINGS_BELOW) return;
    void this.save({ claimed: true });
  }

  /**
   * Save what changed since the last save, so the next start reads it back (where replicas
   * share the file, unless another claimed a save lately: see `save`). Bounded, so that the
   * store still closes within the shutdown budget: an unfinished save only leaves a temporary
   * file, and the next start checks whatever it reads anyway.
   */
  async close(ready: boolean): Promise<void> {
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_SAVE_MS).unref());
    const saved = (async () => {
      await this.pending;
      if (ready && this.changes > 0) await this.save({ claimed: true });
    })();
    await Promise.race([saved, timeout]);
  }

  /** Save now (after the save under way), whatever the count: a forget must leave no copy on disk. */
  saveNow(): Promise<void> {
    return this.save();
  }

  /** Save once loaded, whatever the count, unless another replica claimed a save lately: the file holds another analysis's terms. */
  replaceStale(): Promise<void> {
    return this.save({ claimed: true });
  }

  /**
   * `claimed`: where replicas share the file, save only if no other replica claimed a save
   * within the last half of the time this one's changes took to pile up: that replica's save
   * holds all but the writes of less than half a save's worth, and so the replicas, which hear
   * the same writes, take turns instead of each saving the whole index. A claim that fails
   * (the store out of reach) saves all the same: the save says whether the store is back.
   * Saves run one after another: each waits for the one before.
   */
  private save({ claimed = false } = {}): Promise<void> {
    const counted = performance.now() - this.countingSince;
    const changes = this.changes;
    this.changes = 0;
    this.countingSince = performance.now();
    const before = this.pending;
    const run: Promise<void> = (async () => {
      await before;
      if (claimed && !(await this.claim(counted))) {
        this.parts.logger.debug({ counted_ms: Math.round(counted) }, 'search index not saved: another replica claimed the save');
        return;
      }
      const started = performance.now();
      const saved = await saveSnapshot(this.parts, this.file);
      if (saved !== null) this.parts.logger.debug({ ms: Math.round(performance.now() - started), entries: saved }, 'search index saved');
      // Abandoned (the index was renumbered meanwhile): the changes still count, so the next
      // one starts a save again rather than a whole save's worth later (other replicas may
      // have left this save to this one's claim).
      else this.changes += changes;
    })()
      .catch((error: unknown) => this.parts.logger.warn({ err: error }, 'saving the search index failed; the next start indexes again what the saved one lacks'))
      .finally(() => {
        if (this.pending === run) this.pending = null;
      });
    this.pending = run;
    return run;
  }

  /** Whether this replica should save changes that took `counted` ms to pile up (always, where no replica shares the file). */
  private async claim(counted: number): Promise<boolean> {
    if (!this.file.claimSave) return true;
    try {
      return await this.file.claimSave(counted / 2);
    } catch (error) {
      this.parts.logger.warn({ err: error }, 'claiming the search index save failed; saving it all the same');
      return true;
    }
  }
}

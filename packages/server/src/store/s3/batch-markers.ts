import type { BucketObjects } from './bucket-objects.ts';
import type { ObjectKeys } from './object-keys.ts';

/** Object metadata naming the batch a version object belongs to, and when it may be given up. */
export const BATCH_ID = 'cairn-batch';
export const BATCH_DEADLINE = 'cairn-batch-deadline';

/**
 * How long a batch may stay undecided before a reader may abort it. A batch writer puts its
 * few version objects and its marker within seconds; a crashed one never does, and its
 * versions must stop blocking their entries.
 */
export const BATCH_DEADLINE_MS = 20_000;

export type BatchState = 'committed' | 'aborted' | 'pending';

/** Decided states never change, so they are cached; this bounds the cache. */
const CACHE_LIMIT = 10_000;

/**
 * S3 has no multi-object transaction, so a batch decides with one object: its versions are
 * created first, tagged with the batch id, and count only once `batches/<id>.json` says
 * `committed`. The marker is created with `If-None-Match: *`, so the writer's commit and a
 * reader's abort (after the deadline) cannot both win: whichever lands first is the batch's
 * fate for every replica. Until then the versions are invisible, which is what makes a batch
 * all-or-nothing even when its writer is killed half-way.
 */
export class BatchMarkers {
  private readonly objects: BucketObjects;
  private readonly keys: ObjectKeys;
  private readonly decided = new Map<string, Exclude<BatchState, 'pending'>>();

  constructor(objects: BucketObjects, keys: ObjectKeys) {
    this.objects = objects;
    this.keys = keys;
  }

  /** The fate of the batch a version object's metadata names; aborts it when overdue. */
  async state(metadata: Record<string, string>, now = Date.now()): Promise<BatchState> {
    const id = metadata[BATCH_ID] as string;
    const known = this.decided.get(id) ?? (await this.read(id));
    if (known) return known;
    if (now <= Number(metadata[BATCH_DEADLINE] ?? 0)) return 'pending';
    return this.decide(id, 'aborted');
  }

  /** Try to set the batch's fate; answers the fate that won (the other side may have been first). */
  async decide(id: string, want: Exclude<BatchState, 'pending'>): Promise<Exclude<BatchState, 'pending'>> {
    const outcome = await this.objects.create(this.keys.batch(id), JSON.stringify({ state: want }));
    if (outcome === 'created') return this.remember(id, want);
    for (let attempt = 0; attempt < 5; attempt++) {
      const found = await this.read(id);
      if (found) return found;
      // 'busy' (another conditional put in flight) or not yet readable: ask again shortly.
      await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
    }
    throw new Error(`batch ${id}: its marker could not be created or read`);
  }

  private async read(id: string): Promise<Exclude<BatchState, 'pending'> | null> {
    const text = await this.objects.getText(this.keys.batch(id));
    if (text === null) return null;
    const state = (JSON.parse(text) as { state?: string }).state === 'committed' ? 'committed' : 'aborted';
    return this.remember(id, state);
  }

  private remember(id: string, state: Exclude<BatchState, 'pending'>): Exclude<BatchState, 'pending'> {
    if (this.decided.size >= CACHE_LIMIT) this.decided.delete(this.decided.keys().next().value as string);
    this.decided.set(id, state);
    return state;
  }
}

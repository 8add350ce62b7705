import { testableMs } from '../../domain/test-timing.ts';
import type { Logger } from 'pino';
import type { BucketObjects } from './bucket-objects.ts';
import { parseEntry } from './change-window.ts';
import { CorruptDataError, parseObject } from './damaged-object.ts';
import type { ObjectKeys } from './object-keys.ts';

/** Object metadata naming the batch a version object belongs to, and when it may be given up. */
export const BATCH_ID = 'cairn-batch';
export const BATCH_DEADLINE = 'cairn-batch-deadline';

/**
 * How long a batch may stay undecided before a reader may abort it. A batch writer puts its
 * few version objects and its marker within seconds; a crashed one never does, and its
 * versions must stop blocking their entries. CAIRN_TEST_BATCH_DEADLINE_MS shortens it for
 * tests alone (a crash test waits it out after every kill); read at each use, so a test
 * process can set it before its first batch.
 */
export const batchDeadlineMs = (): number => testableMs('CAIRN_TEST_BATCH_DEADLINE_MS', 20_000);

/** Version objects' metadata: the version's written_at (version-objects.ts). */
export const WRITTEN_AT = 'cairn-written-at';

/** Change objects are looked for from this long before their batch's start (clock steps on the writer). */
const EVIDENCE_SLACK_MS = 60_000;

export type BatchState = 'committed' | 'aborted' | 'pending';

/** Decided states never change, so they are cached; this bounds the cache. */
const CACHE_LIMIT = 10_000;

/** Marker writes shared while in flight (decide); past this many at once, callers write their own. */
const IN_FLIGHT_LIMIT = 1_000;

type Decided = Exclude<BatchState, 'pending'>;

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
  private readonly decided = new Map<string, Decided>();
  /** decide()'s marker writes in flight, by wanted state and batch id; removed once settled. */
  private readonly deciding = new Map<string, Promise<Decided>>();

  private readonly logger: Logger | undefined;

  constructor(objects: BucketObjects, keys: ObjectKeys, logger?: Logger) {
    this.objects = objects;
    this.keys = keys;
    this.logger = logger;
  }

  /**
   * The fate of the batch a version object's metadata names; aborts it when overdue. `of` names
   * the version object (its entry's address hash and version number).
   *
   * An overdue batch without a marker is aborted only when nothing shows it committed: a marker
   * lost after the commit (deleted by hand, a bucket restored without it) must not throw away
   * an acknowledged batch, whose change objects the writer put only once it had committed. A
   * change object of this very version (its key names the entry and version, its body the
   * version's written_at) is that proof: the marker is then created again as committed.
   */
  async state(metadata: Record<string, string>, of?: { hash: string; version: number }, now = Date.now()): Promise<BatchState> {
    const id = metadata[BATCH_ID] as string;
    const known = this.decided.get(id) ?? (await this.read(id));
    if (known) return known;
    const deadline = Number(metadata[BATCH_DEADLINE] ?? 0);
    if (now <= deadline) return 'pending';
    // Every reader of an overdue batch (up to one per version: a search, a list page) gets
    // here at once. The evidence is per version, so each looks for its own; the marker write
    // is shared (decide), so the batch gets one PUT from this process, not one per reader.
    const proof = of ? await this.committedChange(of, metadata[WRITTEN_AT], deadline - batchDeadlineMs(), deadline) : null;
    // Decided while this reader looked (by another's decide here): a marker exists, and it is
    // the batch's fate whatever this reader found; no write could change it.
    const meanwhile = this.decided.get(id);
    if (meanwhile) return meanwhile;
    if (proof) {
      const joined = this.deciding.has(`committed ${id}`);
      const fate = await this.decide(id, 'committed');
      if (!joined) this.logger?.warn({ key: this.keys.batch(id), fate, proof }, 'batch marker missing, but the batch\'s change objects show it committed; marker written again');
      return fate;
    }
    return this.decide(id, 'aborted');
  }

  /**
   * The key of a change object of version `of` written at `writtenAt`, stamped between the
   * batch's start and its deadline (on its writer's clock, which also stamps its changes; give
   * or take EVIDENCE_SLACK_MS), or null. A committed batch's change objects follow its commit,
   * which comes before its deadline; the window keeps this from listing every change made since
   * (a writer killed mid-batch leaves a version that may be met hours of writes later).
   */
  private async committedChange(of: { hash: string; version: number }, writtenAt: string | undefined, startedMs: number, deadlineMs: number): Promise<string | null> {
    if (writtenAt === undefined) return null;
    const until = deadlineMs + EVIDENCE_SLACK_MS;
    for await (const page of this.objects.list(this.keys.changesPrefix, this.keys.changesFrom(startedMs - EVIDENCE_SLACK_MS))) {
      for (const key of page) {
        const parsed = this.keys.parseChange(key);
        if (parsed && parsed.timeMs > until) return null;
        const named = parsed?.of;
        if (!named || named.hash !== of.hash || named.version !== of.version) continue;
        const entry = parseEntry(await this.objects.getText(key));
        if (entry?.written_at === writtenAt) return key;
      }
    }
    return null;
  }

  /**
   * Try to set the batch's fate; answers the fate that won (the other side may have been first).
   *
   * Concurrent calls for the same batch and the same wanted state share one write (and its
   * read-back): the herd of readers of one overdue batch sends one conditional PUT, not one
   * each that all but one lose and then poll for. The share is keyed by the wanted state too,
   * never by the batch alone: a reader that found proof of commit must not join an abort in
   * flight, for its own `committed` PUT may still land first (the abort's may be slow, or fail);
   * joining would give up that chance and answer `aborted` for a batch it could have kept. So
   * it sends its own, and `If-None-Match: *` arbitrates between the two exactly as it did
   * between separate readers: the caller answers what the marker says, never a guess. (A
   * reader that wants `aborted` joining another's `aborted` gives nothing up: their PUTs are
   * the same.) A failed write is not kept: the entry goes when the write settles, either way,
   * so the next caller tries afresh; at most IN_FLIGHT_LIMIT are shared at once.
   */
  decide(id: string, want: Decided): Promise<Decided> {
    const slot = `${want} ${id}`;
    const running = this.deciding.get(slot);
    if (running) return running;
    if (this.deciding.size >= IN_FLIGHT_LIMIT) return this.write(id, want);
    const work = this.write(id, want).finally(() => {
      if (this.deciding.get(slot) === work) this.deciding.delete(slot);
    });
    this.deciding.set(slot, work);
    return work;
  }

  /** Decided writes in flight right now (tests). */
  get inFlight(): number {
    return this.deciding.size;
  }

  private async write(id: string, want: Decided): Promise<Decided> {
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

  /** The marker's state; null when there is none; CorruptDataError naming it when it says neither. */
  private async read(id: string): Promise<Decided | null> {
    const key = this.keys.batch(id);
    const text = await this.objects.getText(key);
    if (text === null) return null;
    const { state } = parseObject<{ state?: unknown }>(key, text, 'not a batch marker');
    // Anything else would decide an acknowledged batch's fate on a guess: refuse, naming the marker.
    if (state !== 'committed' && state !== 'aborted') throw new CorruptDataError(key, 'a batch marker must say {"state":"committed"} or {"state":"aborted"}');
    return this.remember(id, state);
  }

  private remember(id: string, state: Decided): Decided {
    if (this.decided.size >= CACHE_LIMIT) this.decided.delete(this.decided.keys().next().value as string);
    this.decided.set(id, state);
    return state;
  }
}

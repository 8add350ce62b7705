import type { Logger } from 'pino';
import type { Entry } from '../../domain/entry.ts';
import type { ForgetTarget } from '../../ports/store.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { mapLimit } from './map-limit.ts';
import type { ObjectKeys } from './object-keys.ts';

const FETCH_CHUNK = 64;
const FETCH_CONCURRENCY = 16;

/**
 * Which change objects have been read. Change keys start with the writer's clock, so a
 * change can become listable *after* one that sorts later: replicas' clocks differ, and a
 * put stamped at t may land seconds later. So every read lists everything stamped since
 * (start of the previous complete read − lookback) and skips keys already read; a change is
 * missed only if its put took longer than the lookback plus the writer's clock lag. The
 * window only moves after a complete read, so a failed read (an outage) leaves no gap.
 */
export class ChangeWindow {
  private readonly objects: BucketObjects;
  private readonly keys: ObjectKeys;
  private readonly replica: string;
  private readonly logger: Logger;
  private readonly lookbackMs: number;
  private startMs: number;
  /** Keys already read inside the window, with their timestamps for pruning. */
  private readonly seen = new Map<string, number>();
  changesRead = 0;

  constructor(objects: BucketObjects, keys: ObjectKeys, replica: string, logger: Logger, lookbackMs: number, fromMs: number) {
    this.objects = objects;
    this.keys = keys;
    this.replica = replica;
    this.logger = logger;
    this.lookbackMs = lookbackMs;
    this.startMs = fromMs;
  }

  /** Every change stamped before this has been read (given the lookback assumption). */
  get watermarkMs(): number {
    return this.startMs;
  }

  /** Read the changes not read yet, in key order; rejects (UNAVAILABLE) on any failure. */
  async read({ onChange, onForget = () => {}, onWithdrawn = () => {} }: ChangeHandlers): Promise<void> {
    const startedAt = Date.now();
    const fresh: { key: string; timeMs: number }[] = [];
    for await (const page of this.objects.list(this.keys.changesPrefix, this.keys.changesFrom(this.startMs))) {
      for (const key of page) {
        if (this.seen.has(key)) continue;
        const parsed = this.keys.parseChange(key);
        // This replica's own changes were applied when it wrote them.
        if (parsed && parsed.replica !== this.replica) fresh.push({ key, timeMs: parsed.timeMs });
      }
    }
    // Fetch in parallel, apply in key order; a failure keeps the unread rest for next time.
    for (let i = 0; i < fresh.length; i += FETCH_CHUNK) {
      const chunk = fresh.slice(i, i + FETCH_CHUNK);
      const bodies = await mapLimit(chunk, FETCH_CONCURRENCY, (c) => this.objects.getText(c.key));
      for (const [j, c] of chunk.entries()) {
        this.seen.set(c.key, c.timeMs);
        const body = bodies[j] ?? null;
        const forget = parseForget(body);
        const withdrawn = forget ? null : parseWithdrawn(body);
        const entry = forget || withdrawn ? null : parseEntry(body);
        if (forget) onForget(forget);
        // Awaited, so that a read (and the list that waits on it) sees the entries it re-reads.
        else if (withdrawn) await onWithdrawn(withdrawn);
        else if (!entry) this.logger.warn({ key: c.key }, 'unreadable change log object skipped');
        else {
          this.changesRead += 1;
          onChange(entry);
        }
      }
    }
    this.startMs = Math.max(this.startMs, startedAt - this.lookbackMs);
    for (const [key, timeMs] of this.seen) if (timeMs < this.startMs) this.seen.delete(key);
  }
}

/** What a replica does with each kind of object in the change log. */
export interface ChangeHandlers {
  onChange: (entry: Entry) => void;
  /** Another replica forgot the entries `target` names. */
  onForget?: (target: ForgetTarget) => void;
  /** Another replica deleted these versions (a forget's second pass, see S3Store.forget). */
  onWithdrawn?: (versions: WithdrawnVersion[]) => void | Promise<void>;
}

/** A deleted version, named exactly: a head is dropped only if it is that write. */
export type WithdrawnVersion = Pick<Entry, 'namespace' | 'entity_path' | 'key' | 'version' | 'written_at'>;

/** Deleted versions in the change log: `{"withdrawn": WithdrawnVersion[]}`. */
export const parseWithdrawn = (body: string | null): WithdrawnVersion[] | null => {
  if (body === null || !body.startsWith('{"withdrawn"')) return null;
  try {
    const { withdrawn } = JSON.parse(body) as { withdrawn: WithdrawnVersion[] };
    return Array.isArray(withdrawn) ? withdrawn : null;
  } catch {
    return null;
  }
};

/** A forget in the change log: `{"forget": ForgetTarget}` (paths only). */
export const parseForget = (body: string | null): ForgetTarget | null => {
  if (body === null || !body.startsWith('{"forget"')) return null;
  try {
    const { forget } = JSON.parse(body) as { forget: ForgetTarget };
    return typeof forget?.namespace === 'string' && typeof forget.prefix === 'string' ? forget : null;
  } catch {
    return null;
  }
};

export const parseEntry = (body: string | null): Entry | null => {
  if (body === null) return null;
  try {
    const value = JSON.parse(body) as Entry;
    return typeof value === 'object' && value !== null && typeof value.version === 'number' ? value : null;
  } catch {
    return null;
  }
};

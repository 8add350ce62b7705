/** Bodies longer than this (characters) are not kept: the cache is for the many small records. */
const MAX_BODY_CHARS = 64 * 1024;
/** Characters kept in all (bodies and their keys), the least recently used going first. */
const MAX_TOTAL_CHARS = 16 * 1024 * 1024;

interface Kept {
  etag: string;
  text: string;
  folder: string;
}

/**
 * Bodies of objects this replica read, each under the ETag it was read with, so that a listing
 * naming an object with the same ETag needs no GET: an object's ETag changes with every write
 * of it (it is the MD5 of the body on AWS and on the servers the tests run, or an id of the
 * write), so a body read under an ETag is the body of every object listed with it. A record
 * collection read whole (a briefing's evidence pointers, a forget's sweeps) then costs its
 * listing and the records written since, not a GET per record. Bounded: small bodies only, a
 * few MiB in all.
 *
 * What another replica deleted (a forget's purge, a record replaced) must not stay here: a
 * listing of a folder drops the bodies of the keys it passed over without naming (`sweep`),
 * and `clear` empties the cache (a forget heard from another replica).
 */
export class BodyCache {
  private readonly bodies = new Map<string, Kept>();
  /** The keys kept of each folder (a record collection), for `sweep`. */
  private readonly folders = new Map<string, Set<string>>();
  private chars = 0;
  private readonly maxBody: number;
  private readonly maxTotal: number;

  constructor(maxBody = MAX_BODY_CHARS, maxTotal = MAX_TOTAL_CHARS) {
    this.maxBody = maxBody;
    this.maxTotal = maxTotal;
  }

  /** The body of `key` read under `etag`, or undefined when none is kept. */
  get(key: string, etag: string | null): string | undefined {
    if (etag === null) return undefined;
    const found = this.bodies.get(key);
    if (found === undefined || found.etag !== etag) return undefined;
    // Most recently used last.
    this.bodies.delete(key);
    this.bodies.set(key, found);
    return found.text;
  }

  /** Keep `text` as the body of `key` (in `folder`) under `etag` (read in one GET with it). */
  set(folder: string, key: string, etag: string | null, text: string): void {
    this.forget(key);
    if (etag === null || text.length > this.maxBody) return;
    this.bodies.set(key, { etag, text, folder });
    const keys = this.folders.get(folder) ?? new Set<string>();
    keys.add(key);
    this.folders.set(folder, keys);
    this.chars += key.length + text.length;
    for (const oldest of this.bodies.keys()) {
      if (this.chars <= this.maxTotal) break;
      this.forget(oldest);
    }
  }

  forget(key: string): void {
    const found = this.bodies.get(key);
    if (found === undefined) return;
    this.bodies.delete(key);
    this.chars -= key.length + found.text.length;
    const keys = this.folders.get(found.folder);
    keys?.delete(key);
    if (keys?.size === 0) this.folders.delete(found.folder);
  }

  /**
   * A listing of `folder` named `named` and nothing else from after `from` (undefined: its
   * start) through `through` (null: its end): a key kept there that it did not name is gone
   * from the bucket, and so goes from here.
   */
  sweep(folder: string, named: ReadonlySet<string>, from: string | undefined, through: string | null): void {
    const keys = this.folders.get(folder);
    if (keys === undefined) return;
    for (const key of [...keys]) {
      if (named.has(key) || (from !== undefined && key <= from) || (through !== null && key > through)) continue;
      this.forget(key);
    }
  }

  /** Bodies kept. */
  get size(): number {
    return this.bodies.size;
  }

  clear(): void {
    this.bodies.clear();
    this.folders.clear();
    this.chars = 0;
  }
}

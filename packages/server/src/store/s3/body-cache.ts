/** Bodies longer than this (characters) are not kept: the cache is for the many small records. */
const MAX_BODY_CHARS = 64 * 1024;
/** Characters kept in all, the least recently used going first. */
const MAX_TOTAL_CHARS = 16 * 1024 * 1024;

/**
 * Bodies of objects this replica read, each under the ETag it was read with, so that a listing
 * naming an object with the same ETag needs no GET: an object's ETag changes with every write
 * of it (it is the MD5 of the body on AWS and on the servers the tests run, or an id of the
 * write), so a body read under an ETag is the body of every object listed with it. A record
 * collection read whole (a briefing's evidence pointers, a forget's sweeps) then costs its
 * listing and the records written since, not a GET per record. Bounded: small bodies only, a
 * few MiB in all.
 */
export class BodyCache {
  private readonly bodies = new Map<string, { etag: string; text: string }>();
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

  /** Keep `text` as the body of `key` under `etag` (read in one GET with it). */
  set(key: string, etag: string | null, text: string): void {
    this.forget(key);
    if (etag === null || text.length > this.maxBody) return;
    this.bodies.set(key, { etag, text });
    this.chars += text.length;
    for (const [oldest, { text: old }] of this.bodies) {
      if (this.chars <= this.maxTotal) break;
      this.bodies.delete(oldest);
      this.chars -= old.length;
    }
  }

  forget(key: string): void {
    const found = this.bodies.get(key);
    if (found === undefined) return;
    this.bodies.delete(key);
    this.chars -= found.text.length;
  }
}

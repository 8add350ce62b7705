import { hash } from 'node:crypto';

/**
 * JSON with object keys sorted, so that `{a,b}` and `{b,a}` hash alike. Written here rather
 * than taken from a library because stored hashes must never change with a dependency bump.
 * Callers bound the nesting depth first (see `structureProblem`), so recursion is safe.
 * Every write hashes its value, so this builds one string as it goes rather than an array
 * of parts per object; the text is exactly JSON.stringify's with the keys sorted.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = '{';
  for (const key of keys) {
    const child = obj[key];
    if (child === undefined) continue;
    out += (out.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + canonicalJson(child);
  }
  return `${out}}`;
};

/** One-shot hashing: cheaper than a Hash object for the short texts hashed per request. */
export const sha256 = (text: string): string => hash('sha256', text, 'hex');

export const contentHash = (value: unknown): string => contentHashOf(canonicalJson(value));

/** The content hash from a value's canonical JSON, for a caller that needs that text too. */
export const contentHashOf = (canonical: string): string => `sha256:${sha256(canonical)}`;

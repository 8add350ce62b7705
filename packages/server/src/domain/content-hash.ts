import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted, so that `{a,b}` and `{b,a}` hash alike. Written here rather
 * than taken from a library because stored hashes must never change with a dependency bump.
 * Callers bound the nesting depth first (see `structureProblem`), so recursion is safe.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
};

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export const contentHash = (value: unknown): string => `sha256:${sha256(canonicalJson(value))}`;

import type { Entry, EntryValue } from '../domain/entry.ts';
import { analyze } from './analyzer.ts';
import { clipText } from '../domain/clip-text.ts';

/**
 * What of an entry is searchable, by field: its address (entity path and key), the text of
 * its value (a string, or every string and number inside a JSON object; object keys are
 * structure, not content) and its tags. Each field class has a weight in the BM25F sum;
 * addresses and tags are short and chosen on purpose, so a word there says more.
 */
export type FieldClass = 'address' | 'value' | 'tags';

export const FIELD_WEIGHTS: Readonly<Record<FieldClass, number>> = { address: 1.5, value: 1, tags: 1.5 };

/** The letter PostgreSQL's tsvector keeps per position for each field class. */
export const FIELD_LETTER: Readonly<Record<FieldClass, 'A' | 'B' | 'C'>> = { address: 'A', value: 'B', tags: 'C' };

export interface FieldText {
  /** `entity_path`, `key`, `value`, `value.title`, `value.labels.0`, `tags` — named for highlights. */
  field: string;
  cls: FieldClass;
  text: string;
}

const MAX_DEPTH = 16;
/** Text beyond this per entry is not indexed: bounded work per write, whatever the value size. */
export const MAX_INDEXED_CHARS = 64 * 1024;

const valueTexts = (value: EntryValue, out: FieldText[]): void => {
  if (typeof value === 'string') {
    out.push({ field: 'value', cls: 'value', text: value });
    return;
  }
  const walk = (node: unknown, path: string, depth: number): void => {
    if (typeof node === 'string') out.push({ field: path, cls: 'value', text: node });
    else if (typeof node === 'number' && Number.isFinite(node)) out.push({ field: path, cls: 'value', text: String(node) });
    else if (node !== null && typeof node === 'object' && depth < MAX_DEPTH) {
      for (const [k, child] of Object.entries(node)) walk(child, `${path}.${k}`, depth + 1);
    }
  };
  walk(value, 'value', 0);
};

export const entryFields = (entry: Entry): FieldText[] => {
  const out: FieldText[] = [
    { field: 'entity_path', cls: 'address', text: entry.entity_path },
    { field: 'key', cls: 'address', text: entry.key },
  ];
  valueTexts(entry.value, out);
  if (entry.tags.length > 0) out.push({ field: 'tags', cls: 'tags', text: entry.tags.join(' ') });
  let budget = MAX_INDEXED_CHARS;
  return out.filter((f) => {
    if (budget <= 0) return false;
    if (f.text.length > budget) f.text = f.text.slice(0, budget);
    budget -= f.text.length;
    return true;
  });
};

/**
 * Whether two values equal by content hash list their object keys in the same order, down to
 * the depth the text walk reads: the hash is of the value with its keys sorted, but the text
 * is read in the value's own order (and cut at MAX_INDEXED_CHARS), so `{a, b}` and `{b, a}`
 * can index differently. PostgreSQL's jsonb returns keys in an order of its own.
 */
const sameKeyOrder = (a: unknown, b: unknown, depth = 0): boolean => {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || depth >= MAX_DEPTH) return true;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key, i) => key === keysB[i] && sameKeyOrder((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], depth + 1));
};

/**
 * Whether two versions of one entry have the same searchable text (its address is theirs
 * both): the same value, by its content hash and its keys' order, and the same tags. What else
 * a version changes (confidence, evidence, event type, provenance, expiry) is read from the
 * entry itself.
 */
export const sameText = (a: Entry, b: Entry): boolean =>
  !a.deleted &&
  !b.deleted &&
  a.content_hash === b.content_hash &&
  a.tags.length === b.tags.length &&
  a.tags.every((tag, i) => tag === b.tags[i]) &&
  sameKeyOrder(a.value, b.value);

/** An entry's terms with their weighted frequencies, and its weighted length (BM25F). */
export interface DocTerms {
  tf: Map<string, number>;
  length: number;
}

export const docTerms = (entry: Entry): DocTerms => {
  const tf = new Map<string, number>();
  let length = 0;
  for (const f of entryFields(entry)) {
    const weight = FIELD_WEIGHTS[f.cls];
    for (const token of analyze(f.text)) {
      tf.set(token.term, (tf.get(token.term) ?? 0) + weight);
      if (!token.overlap) length += weight;
    }
  }
  return { tf, length };
};

/** One text for an embedder: what a reader would take in, address first. */
export const embeddingText = (entry: Entry, maxChars = 4000): string => {
  const parts = [entry.entity_path.replaceAll('/', ' '), entry.key];
  for (const f of entryFields(entry)) if (f.cls === 'value') parts.push(f.text);
  if (entry.tags.length > 0) parts.push(entry.tags.join(' '));
  const text = parts.join('\n');
  return clipText(text, maxChars);
};

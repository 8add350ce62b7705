import { isUtf8 } from 'node:buffer';
import type { z } from 'zod';
import { ServiceError } from '../domain/errors.ts';
import { parseInput } from '../domain/parse-input.ts';

/** What a JSON document is, in words, for the 400 that refuses it. */
const kindOf = (raw: unknown): string => (raw === null ? 'null' : Array.isArray(raw) ? 'an array' : `a ${typeof raw}`);

/**
 * The JSON document of a delivery body, parsed once per body: the connector's peek (for the
 * log), wants and handle all read the same delivery, and a provider body is often tens of
 * kilobytes, so each extra JSON.parse costs as much as the signature check. Text no backend
 * can store (U+0000, a lone surrogate) becomes U+FFFD here, once. Callers treat the document
 * as read-only: it is shared by every reader of the delivery.
 */
type Parsed = { ok: true; doc: unknown } | { ok: false; problem: string };
const parsed = new WeakMap<Buffer, Parsed>();

const documentOf = (body: Buffer): Parsed => {
  const known = parsed.get(body);
  if (known) return known;
  // JSON is UTF-8 (RFC 8259); decoding other bytes would store U+FFFD in their place, as the
  // request body parser of every other route refuses them.
  if (!isUtf8(body)) {
    const refused = { ok: false as const, problem: 'not UTF-8: the delivery body holds bytes that are not UTF-8 text' };
    parsed.set(body, refused);
    return refused;
  }
  const text = body.toString('utf8');
  let result: Parsed;
  try {
    const doc: unknown = JSON.parse(text);
    // JSON text can carry either only as a \u escape, so most bodies skip the walk (and the
    // plain substring search is much cheaper than the pattern over a large body).
    result = { ok: true, doc: text.includes('\\u') && UNSTORABLE_ESCAPE.test(text) ? storable(doc) : doc };
  } catch {
    result = { ok: false, problem: 'not JSON: the delivery body does not parse as JSON' };
  }
  parsed.set(body, result);
  return result;
};

/**
 * Drop the parsed document of `body` once its delivery is mapped: nothing reads it after
 * `handle`. Cached until the answer (the body lives as long as its request), it was the largest
 * thing a delivery held while its writes waited on storage (a 21 KB GitHub body parses to
 * about 24 KiB of objects), copied by the young-generation collections it lived through and
 * promoted, to die in the old generation: under the bench's webhook load, 30–32 KiB promoted
 * per delivery against 10–14 without it.
 */
export const forgetDocument = (body: Buffer): void => {
  parsed.delete(body);
};

/**
 * Parse a delivery body as JSON and check it against the provider's schema. A body that is
 * not JSON, or JSON that is not an object (every provider sends one object per delivery), is
 * a 400; an object of the wrong shape is a 422 naming the fields.
 */
export const parseJsonBody = <S extends z.ZodType>(body: Buffer, schema: S): z.output<S> => {
  const result = documentOf(body);
  if (!result.ok) throw new ServiceError('BAD_REQUEST', result.problem);
  const raw = result.doc;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ServiceError('BAD_REQUEST', `not a JSON object: the delivery body is ${kindOf(raw)}`);
  }
  return parseInput(schema, raw);
};

/**
 * The delivery's JSON object for naming it in the delivery log (its event type, its id),
 * or null when it is not one. Never throws: the log describes refused deliveries too.
 */
export const peekJson = (body: Buffer): Record<string, unknown> | null => {
  const result = documentOf(body);
  return result.ok ? objectOr(result.doc) : null;
};

/** A peeked value when it is a JSON object. */
export const objectOr = (value: unknown): Record<string, unknown> | null =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/** A peeked field when it is a non-empty string. */
export const stringOr = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

const UNSTORABLE_ESCAPE = /\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})/;

const storableText = (s: string): string => s.replaceAll('\u0000', '\uFFFD').toWellFormed();

/**
 * Replace unstorable text in every string and key of a freshly parsed document, in place and
 * without recursion (a hostile document may nest as deep as the body allows).
 */
const storable = (doc: unknown): unknown => {
  if (typeof doc === 'string') return storableText(doc);
  const stack: unknown[] = [doc];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const value = record[key];
      const cleanKey = storableText(key);
      const cleanValue = typeof value === 'string' ? storableText(value) : value;
      if (cleanKey !== key) delete record[key];
      record[cleanKey] = cleanValue;
      if (typeof cleanValue === 'object') stack.push(cleanValue);
    }
  }
  return doc;
};

/** Longest segment SPEC §3 allows, in UTF-16 code units as `entityPathProblem` counts them. */
const SEGMENT_UNITS = 128;

/**
 * Make a provider's name usable as one entity path segment ("/" would add a segment). The
 * cut is made between code points, never inside a surrogate pair, and whitespace is trimmed
 * after it, so a long Unicode name still yields a valid segment.
 */
export const pathSegment = (name: string): string => {
  const cleaned = name
    .toWellFormed()
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/g, '')
    .replace(/\//g, '-')
    .trim();
  let cut = '';
  for (const char of cleaned) {
    if (cut.length + char.length > SEGMENT_UNITS) break;
    cut += char;
  }
  cut = cut.trim();
  return cut === '' || cut === '.' || cut === '..' ? 'unknown' : cut;
};

import type { z } from 'zod';
import { ServiceError } from '../domain/errors.ts';
import { parseInput } from '../domain/parse-input.ts';

/**
 * Parse a delivery body as JSON and check it against the provider's schema. A body that is
 * not JSON is a 400; JSON of the wrong shape is a 422 naming the fields. A U+0000 in the
 * provider's text (which no backend stores) becomes U+FFFD rather than costing the delivery.
 */
export const parseJsonBody = <S extends z.ZodType>(body: Buffer, schema: S): z.output<S> => {
  let raw: unknown;
  try {
    raw = JSON.parse(withoutNul(body.toString('utf8')));
  } catch {
    throw new ServiceError('BAD_REQUEST', 'the delivery body is not valid JSON');
  }
  return parseInput(schema, raw);
};

/**
 * JSON text can carry U+0000 only as the escape `\u0000` (in a string or a key); it is one
 * when an odd number of backslashes leads up to the `u` (an even run is escaped backslashes).
 * Rewriting the text keeps this free of recursion however deep the document nests.
 */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;
const withoutNul = (text: string): string => (text.includes('\\u0000') ? text.replace(NUL_ESCAPE, '$1\\ufffd') : text);

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

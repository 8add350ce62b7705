import type { z } from 'zod';
import { ServiceError } from '../domain/errors.ts';
import { parseInput } from '../domain/parse-input.ts';

/**
 * Parse a delivery body as JSON and check it against the provider's schema. A body that is
 * not JSON is a 400; JSON of the wrong shape is a 422 naming the fields.
 */
export const parseJsonBody = <S extends z.ZodType>(body: Buffer, schema: S): z.output<S> => {
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ServiceError('BAD_REQUEST', 'the delivery body is not valid JSON');
  }
  return parseInput(schema, raw);
};

/** Make a provider's name usable as one entity path segment ("/" would add a segment). */
export const pathSegment = (name: string): string => {
  const cleaned = name
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/g, '')
    .replace(/\//g, '-')
    .trim()
    .slice(0, 128);
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? 'unknown' : cleaned;
};

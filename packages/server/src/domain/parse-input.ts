import type { z } from 'zod';
import { type FieldIssue, validationFailed } from './errors.ts';

/**
 * Validate a caller's raw input against an operation's schema. Every transport hands its
 * raw input to the service, so REST, MCP and the CLI share one validation and one set of
 * messages naming the bad fields.
 */
export const parseInput = <S extends z.ZodType>(schema: S, raw: unknown): z.output<S> => {
  const result = schema.safeParse(raw ?? {});
  if (result.success) return result.data;
  const details: FieldIssue[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) details.push({ field: [...issue.path, key].join('.'), message: 'is not a known field' });
    } else {
      details.push({ field: issue.path.length > 0 ? issue.path.join('.') : 'body', message: issue.message });
    }
  }
  throw validationFailed(details);
};

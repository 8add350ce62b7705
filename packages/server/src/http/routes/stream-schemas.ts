import { z } from 'zod';
import { ErrorSchema } from './error-schema.ts';

/**
 * A success answer that is not one JSON document (an event stream, an archive, metrics text),
 * for the OpenAPI document: its media type, and what its body holds in words.
 */
export const streamedResponse = (mediaType: string, description: string) => ({
  description,
  content: { [mediaType]: { schema: z.string().describe(description) } },
});

/** Errors of a route that declares another media type (`produces`): they are JSON all the same. */
export const JsonErrorResponse = {
  '4xx': { description: 'Error', content: { 'application/json': { schema: ErrorSchema } } },
  503: { description: 'Unavailable', content: { 'application/json': { schema: ErrorSchema } } },
} as const;

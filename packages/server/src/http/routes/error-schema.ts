import { z } from 'zod';

/** The SPEC §4 error body, for the OpenAPI document. */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      request_id: z.string(),
      details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    }),
  })
  .meta({ id: 'Error' });

export const ErrorResponse = { '4xx': ErrorSchema, 503: ErrorSchema } as const;

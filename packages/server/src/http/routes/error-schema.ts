import { z } from 'zod';

/** The SPEC §4 error body, for the OpenAPI document. */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      request_id: z.string(),
      details: z
        .array(z.object({ field: z.string(), message: z.string() }))
        .optional()
        .describe(
          'On a 422, each field refused and why. On a 503, a marker telling it from an outage: `{"field": "outcome", "message": "unknown"}` (a write that may have been stored: read before resending it) or `{"field": "stored_data", "message": "damaged"}` (retrying will not help); neither carries Retry-After.',
        ),
    }),
  })
  .meta({ id: 'Error' });

export const ErrorResponse = { '4xx': ErrorSchema, 503: ErrorSchema } as const;

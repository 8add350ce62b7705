import { z } from 'zod';

/** Shapes of setting values shared by the configuration and the backends' own variables. */

/** Trimmed text; blank counts as unset. */
export const optionalText = z
  .string()
  .transform((s) => s.trim())
  .pipe(z.string())
  .optional()
  .transform((s) => (s ? s : undefined));

/** A whole number within bounds, with a default. */
export const integer = (min: number, max: number, fallback: number) =>
  z.coerce
    .number({ error: 'expected a whole number' })
    .int({ error: 'expected a whole number' })
    .min(min, { error: `expected at least ${min}` })
    .max(max, { error: `expected at most ${max}` })
    .default(fallback);

/** Comma-separated values, trimmed, empty ones dropped. */
export const list = z
  .string()
  .optional()
  .transform((s) => (s ?? '').split(',').map((x) => x.trim()).filter((x) => x.length > 0));

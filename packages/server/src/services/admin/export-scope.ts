import { z } from 'zod';
import { ServiceError } from '../../domain/errors.ts';
import { NamespaceSchema } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import { namespaceFor, requireScope } from '../authorize.ts';
import type { Context } from '../context.ts';

export const ExportInput = z.object({
  namespace: NamespaceSchema.optional().describe("The namespace to export (default: the key's own)."),
  all: z.enum(['true', 'false']).optional().describe('"true": every namespace (a key that may use every namespace only).'),
});

/**
 * Which namespaces a caller may export: an admin key its own (or one it may use); every
 * namespace only for a key that may use all of them (CAIRN_API_KEYS, open mode).
 */
export const exportScope = (ctx: Context, raw: unknown): '*' | string[] => {
  requireScope(ctx, 'admin');
  const input = parseInput(ExportInput, raw);
  if (input.all === 'true') {
    if (input.namespace !== undefined) throw new ServiceError('VALIDATION_FAILED', 'give either namespace or all=true, not both');
    if (ctx.access && ctx.access.namespaces !== '*') throw new ServiceError('FORBIDDEN', 'this key may not export every namespace; name one it may use');
    return '*';
  }
  return [namespaceFor(ctx, input.namespace)];
};

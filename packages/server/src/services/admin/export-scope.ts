import { z } from 'zod';
import { ServiceError } from '../../domain/errors.ts';
import { NamespaceSchema } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import { namespaceFor, requireScope } from '../authorize.ts';
import type { ExportTally } from '../archive/export-archive.ts';
import { recordAudit } from '../audit-log.ts';
import type { Context, ServiceDeps } from '../context.ts';

export const ExportInput = z.object({
  namespace: NamespaceSchema.optional().describe("The namespace to export (default: the key's own)."),
  all: z.enum(['true', 'false']).optional().describe('"true": every namespace (a key that may use every namespace only).'),
});

/**
 * Which namespaces a caller may export: an admin key without prefixes its own (or one it may
 * use); every namespace only for a key that may use all of them (CAIRN_API_KEYS, open mode).
 */
export const exportScope = (ctx: Context, raw: unknown): '*' | string[] => {
  requireScope(ctx, 'admin');
  const input = parseInput(ExportInput, raw);
  // An archive holds every path of a namespace, so a key confined to some of them may not take one.
  if (ctx.access && ctx.access.prefixes !== null) {
    throw new ServiceError('FORBIDDEN', 'this key is confined to entity-path prefixes; an export holds every path of a namespace');
  }
  if (input.all === 'true') {
    if (input.namespace !== undefined) {
      throw new ServiceError('VALIDATION_FAILED', 'give either namespace or all=true, not both', {
        details: [{ field: 'namespace', message: 'leave it out to export every namespace with all=true' }],
      });
    }
    if (ctx.access && ctx.access.namespaces !== '*') throw new ServiceError('FORBIDDEN', 'this key may not export every namespace; name one it may use');
    return '*';
  }
  return [namespaceFor(ctx, input.namespace)];
};

/**
 * An export leaves a line in the audit log of each namespace it read (the caller's, for all),
 * with the counts of that namespace's lines only (`tally`, exportArchive's): an export of
 * every namespace, recorded in the caller's, must not tell its admin keys the others' sizes.
 */
export const auditExport = async (deps: ServiceDeps, ctx: Context, namespaces: '*' | string[], tally: ExportTally): Promise<void> => {
  for (const namespace of namespaces === '*' ? [ctx.namespace] : namespaces) {
    const changes = { ...(tally.get(namespace) ?? { entries: 0, versions: 0, records: 0 }) };
    await recordAudit(deps, ctx, namespace, { action: 'archive.exported', target: { namespaces }, changes });
  }
};

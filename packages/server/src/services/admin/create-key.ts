import { z } from 'zod';
import { SCOPES, hasScope } from '../../domain/access.ts';
import { ServiceError } from '../../domain/errors.ts';
import { EntityPathSchema, NamespaceSchema, labelSchema } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import { recordAudit } from '../audit-log.ts';
import { namespaceFor, pathVisible, requireScope } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { teamsCollection } from './team-records.ts';
import { KEYS, type KeyRecord, keyView, newKey } from './key-records.ts';

export const CreateKeyInput = z
  .object({
    name: labelSchema(128, 'What the key is for, e.g. "triage-bot".'),
    scopes: z.array(z.enum(SCOPES)).min(1).describe('read, write and/or admin.'),
    prefixes: z
      .array(z.string().transform((p) => p.replace(/\/+$/, '')).pipe(EntityPathSchema))
      .min(1)
      .max(32)
      .optional()
      .describe('Confine the key to these entity-path prefixes, e.g. ["incidents/"].'),
    namespace: NamespaceSchema.optional(),
    team: labelSchema(128, 'The team the key is issued to.').optional(),
  })
  .strict();

/**
 * Issue a managed key. The secret is in this answer only; the store keeps its hash. A
 * managed admin key can only issue keys within its own namespace and prefixes.
 */
export const createKey = async (deps: ServiceDeps, ctx: Context, raw: unknown) => {
  requireScope(ctx, 'admin');
  const input = parseInput(CreateKeyInput, raw);
  const namespace = namespaceFor(ctx, input.namespace);
  for (const prefix of input.prefixes ?? []) {
    if (!pathVisible(ctx, prefix)) throw new ServiceError('FORBIDDEN', `cannot issue a key for ${prefix}: outside this key's prefixes`);
  }
  if (!input.prefixes && ctx.access?.prefixes) throw new ServiceError('FORBIDDEN', 'a confined key can only issue keys confined to its prefixes');
  if (ctx.access && !input.scopes.every((s) => hasScope(ctx.access!, s))) throw new ServiceError('FORBIDDEN', 'cannot grant scopes this key does not have');
  if (ctx.access?.keyId === null && !(input.scopes.includes('admin') && !input.prefixes)) await refuseLockout(deps);
  if (input.team && !(await deps.store.getRecord(teamsCollection(namespace), input.team))) {
    throw new ServiceError('VALIDATION_FAILED', `no team "${input.team}" in namespace ${namespace}`, { details: [{ field: 'team', message: 'create the team first' }] });
  }
  const { id, key, hash } = newKey();
  const record: KeyRecord = {
    name: input.name,
    hash,
    scopes: [...new Set(input.scopes)],
    prefixes: input.prefixes ?? null,
    namespace,
    team: input.team ?? null,
    created_at: new Date(deps.now()).toISOString(),
    revoked_at: null,
  };
  await deps.store.putRecord(KEYS, id, { ...record });
  await recordAudit(deps, ctx, namespace, { action: 'key.created', target: { key_id: id }, changes: { name: record.name, scopes: record.scopes, prefixes: record.prefixes, team: record.team } });
  return { ...keyView(id, record), key };
};

/**
 * In open mode the first managed key ends it: every later request needs a key. Were that key
 * unable to manage keys (no `admin`, or confined to prefixes), nothing could issue or revoke
 * keys over HTTP any more and the dashboard would be locked, until an operator set
 * CAIRN_API_KEYS and restarted. So the first key must be an admin key over the whole namespace.
 */
const refuseLockout = async (deps: ServiceDeps): Promise<void> => {
  if ((await deps.store.listRecords(KEYS, { limit: 1 })).length > 0) return;
  throw new ServiceError('VALIDATION_FAILED', 'the first key ends open mode, so it must be an admin key over every path: issue one with scopes ["admin"] and no prefixes, then the others with it', {
    details: [{ field: 'scopes', message: 'the first key must have the admin scope and no prefixes' }],
  });
};

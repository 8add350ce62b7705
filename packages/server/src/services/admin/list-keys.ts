import { z } from 'zod';
import type { Access } from '../../domain/access.ts';
import { NamespaceSchema } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import { namespaceFor, pathVisible, requireScope } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { allKeyRecords, keyView, withinReach } from './key-records.ts';

export const ListKeysInput = z.object({
  namespace: NamespaceSchema.optional().describe('Only the keys of this namespace (one the calling key may use; 403 otherwise).'),
});

/**
 * Every managed key the caller administers (its namespaces; for a key confined to some paths,
 * the keys confined within them), without hashes, newest last; with `namespace`, those of that
 * namespace only, which the caller must be allowed to use (a filter would answer "none" for a
 * namespace the key may not see, as if it were empty).
 */
export const listKeys = async (deps: ServiceDeps, ctx: Context, raw: unknown = {}) => {
  requireScope(ctx, 'admin');
  const input = parseInput(ListKeysInput, raw);
  const namespaces: Access['namespaces'] = input.namespace !== undefined ? [namespaceFor(ctx, input.namespace)] : (ctx.access?.namespaces ?? '*');
  const confined = (ctx.access?.prefixes ?? null) !== null;
  const visible = (path: string): boolean => pathVisible(ctx, path);
  const keys: Array<ReturnType<typeof keyView>> = [];
  for await (const { id, record } of allKeyRecords(deps.store)) {
    if ((namespaces === '*' || namespaces.includes(record.namespace)) && withinReach(record, visible, confined)) keys.push(keyView(id, record));
  }
  // Records come in id order, and ids are random: newest last is by creation time.
  return { keys: keys.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id)) };
};

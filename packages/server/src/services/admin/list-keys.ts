import type { Access } from '../../domain/access.ts';
import { pathVisible, requireScope } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { allKeyRecords, keyView, withinReach } from './key-records.ts';

/**
 * Every managed key the caller administers (its namespaces; for a key confined to some paths,
 * the keys confined within them), without hashes, newest last.
 */
export const listKeys = async (deps: ServiceDeps, ctx: Context) => {
  requireScope(ctx, 'admin');
  const namespaces: Access['namespaces'] = ctx.access?.namespaces ?? '*';
  const confined = (ctx.access?.prefixes ?? null) !== null;
  const visible = (path: string): boolean => pathVisible(ctx, path);
  const keys: Array<ReturnType<typeof keyView>> = [];
  for await (const { id, record } of allKeyRecords(deps.store)) {
    if ((namespaces === '*' || namespaces.includes(record.namespace)) && withinReach(record, visible, confined)) keys.push(keyView(id, record));
  }
  // Records come in id order, and ids are random: newest last is by creation time.
  return { keys: keys.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id)) };
};

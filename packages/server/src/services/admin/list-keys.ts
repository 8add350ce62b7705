import type { Access } from '../../domain/access.ts';
import { pathVisible, requireScope } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { KEYS, type KeyRecord, keyView, withinReach } from './key-records.ts';

const PAGE = 500;

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
  let after: string | undefined;
  for (;;) {
    const page = await deps.store.listRecords(KEYS, { limit: PAGE, ...(after ? { after } : {}) });
    for (const r of page) {
      const record = r.data as unknown as KeyRecord;
      if ((namespaces === '*' || namespaces.includes(record.namespace)) && withinReach(record, visible, confined)) keys.push(keyView(r.id, record));
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1]?.id;
  }
  // Records come in id order, and ids are random: newest last is by creation time.
  return { keys: keys.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id)) };
};

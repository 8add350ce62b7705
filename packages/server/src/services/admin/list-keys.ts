import type { Access } from '../../domain/access.ts';
import { requireScope } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';
import { KEYS, type KeyRecord, keyView } from './key-records.ts';

const PAGE = 500;

/** Every managed key the caller administers (its namespaces), without hashes, newest last. */
export const listKeys = async (deps: ServiceDeps, ctx: Context) => {
  requireScope(ctx, 'admin');
  const namespaces: Access['namespaces'] = ctx.access?.namespaces ?? '*';
  const keys: Array<ReturnType<typeof keyView>> = [];
  let after: string | undefined;
  for (;;) {
    const page = await deps.store.listRecords(KEYS, { limit: PAGE, ...(after ? { after } : {}) });
    for (const r of page) {
      const record = r.data as unknown as KeyRecord;
      if (namespaces === '*' || namespaces.includes(record.namespace)) keys.push(keyView(r.id, record));
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1]?.id;
  }
  return { keys };
};

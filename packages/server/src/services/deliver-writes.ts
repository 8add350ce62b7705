import type { MappedWrite } from '../connectors/connector.ts';
import { contentHash } from '../domain/content-hash.ts';
import { type Entry, isLive } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import type { Context, ServiceDeps } from './context.ts';
import { writeEntry } from './write-entry.ts';

const MAX_ATTEMPTS = 8;

export interface DeliveredEntry {
  entity_path: string;
  key: string;
  version: number;
  created: boolean;
}

/**
 * Store the writes one inbound event maps to, as shared entries written by
 * `external/<source>`. A write with `update` is a read-modify-write made safe by
 * compare-and-set: if another delivery changed the entry meanwhile, it re-reads and retries.
 */
export const deliverWrites = async (
  deps: ServiceDeps,
  ctx: Context,
  source: string,
  provenance: Record<string, unknown>,
  writes: readonly MappedWrite[],
): Promise<Array<{ entry: Entry; created: boolean }>> => {
  const results: Array<{ entry: Entry; created: boolean }> = [];
  for (const write of writes) results.push(await deliverOne(deps, ctx, source, provenance, write));
  return results;
};

const deliverOne = async (
  deps: ServiceDeps,
  ctx: Context,
  source: string,
  provenance: Record<string, unknown>,
  write: MappedWrite,
): Promise<{ entry: Entry; created: boolean }> => {
  const base = {
    entity_path: write.entity_path,
    key: write.key,
    confidence: write.confidence,
    agent_id: `external/${source}`,
    event_type: write.event_type,
    memory_type: write.memory_type ?? 'event',
    shared: true,
    tags: write.tags ?? [],
    provenance: { source, ...provenance },
  };
  if (!write.update) return writeEntry(deps, ctx, { ...base, value: write.value });
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const head = await deps.store.head({ namespace: ctx.namespace, entity_path: write.entity_path, key: write.key });
    const current = head && isLive(head, deps.now()) ? head : null;
    const value = write.update(current?.value ?? null);
    // A replayed or late event that changes nothing makes no version (its metadata — the
    // delivery id, the event type — would otherwise make one).
    if (current && contentHash(value) === current.content_hash) return { entry: current, created: false };
    try {
      return await writeEntry(deps, ctx, { ...base, value, if_version: current?.version ?? 0 });
    } catch (error) {
      if (!(error instanceof ServiceError && error.code === 'CONFLICT')) throw error;
    }
  }
  throw new ServiceError('CONFLICT', `${write.entity_path} / ${write.key} is changing too fast to update; the provider will retry`);
};

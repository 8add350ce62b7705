import type { MappedWrite } from '../connectors/connector.ts';
import { contentHash } from '../domain/content-hash.ts';
import type { Entry } from '../domain/entry.ts';
import type { Context, ServiceDeps } from './context.ts';
import { writeDerived, writeEntry } from './write-entry.ts';

export interface DeliveredEntry {
  entity_path: string;
  key: string;
  version: number;
  created: boolean;
}

/**
 * Store the writes one inbound event maps to, as shared entries written by
 * `external/<source>`. A write with `update` is a read-modify-write: its value is re-derived
 * from the newest version on every compare-and-set attempt (writeDerived), so a delivery that
 * races another write builds on it instead of overwriting it. The retries are appendVersion's
 * alone; nothing here loops around them.
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
  const fields = {
    confidence: write.confidence,
    agent_id: `external/${source}`,
    event_type: write.event_type,
    memory_type: write.memory_type ?? 'event',
    shared: true,
    tags: write.tags ?? [],
    links: write.links ?? [],
    provenance: { source, ...provenance },
  };
  const target = { entity_path: write.entity_path, key: write.key };
  const { update } = write;
  if (!update) return writeEntry(deps, ctx, { ...target, ...fields, value: write.value });
  return writeDerived(deps, ctx, target, (current) => {
    const value = update(current?.value ?? null);
    // A replayed or late event that changes nothing makes no version (its metadata — the
    // delivery id, the event type — would otherwise make one).
    if (current && contentHash(value) === current.content_hash) return null;
    return { ...fields, value };
  });
};

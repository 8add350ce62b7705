import type { BatchResult } from 'cairn-memory-client';
import { z } from 'zod';
import { NamespaceSchema } from '../domain/names.ts';
import { parseInput } from '../domain/parse-input.ts';
import { type BatchAppend, appendVersions } from './append-version.ts';
import { namespaceFor, requirePath, requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { WriteEntryInput, audited, nextVersion, requireLinkTargets, requireStorableValue } from './write-entry.ts';

/** Entries per batch: enough for a session's worth of notes, small enough for one request body. */
export const MAX_BATCH_ENTRIES = 100;

export const WriteBatchInput = z
  .object({
    namespace: NamespaceSchema.optional().describe('Default namespace for entries that name none.'),
    entries: z
      .array(WriteEntryInput.omit({ similar: true }))
      .min(1)
      .max(MAX_BATCH_ENTRIES)
      .describe(`1–${MAX_BATCH_ENTRIES} writes, each shaped like a single write (with its own optional if_version); all are stored or none.`),
  })
  .strict();
export type WriteBatchInput = z.input<typeof WriteBatchInput>;

export type { BatchResult };

/**
 * Write several entries atomically: every new version is stored, or none is (a conflict,
 * refusal or outage of any one leaves every entry as it was). Each entry is decided like a
 * single write (unchanged ones store nothing) and may carry its own `if_version`.
 */
export const writeBatch = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<BatchResult> => {
  const input = parseInput(WriteBatchInput, raw);
  requireScope(ctx, 'write');
  const items: BatchAppend[] = input.entries.map((entry, i) => {
    const namespace = namespaceFor(ctx, entry.namespace ?? input.namespace);
    requirePath(ctx, entry.entity_path);
    const hash = requireStorableValue(entry.value, `entries.${i}.value`);
    requireLinkTargets(ctx, entry.links);
    const address = { namespace, entity_path: entry.entity_path, key: entry.key };
    return { address, ifVersion: entry.if_version, decide: (view) => nextVersion(ctx, address, entry, view, hash) };
  });
  const results = await appendVersions(deps, items);
  return { results: results.map((r) => audited(deps, ctx, r)).map(({ entry, created }) => ({ entry, unchanged: !created })) };
};

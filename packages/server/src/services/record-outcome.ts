import type { OutcomeResult } from 'cairn-memory-client';
import { z } from 'zod';
import { isLive } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { EntityPathSchema, KeySchema, NamespaceSchema } from '../domain/names.ts';
import { parseInput } from '../domain/parse-input.ts';
import { namespaceFor, requirePath, requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { writeEntry } from './write-entry.ts';

export const RecordOutcomeInput = z
  .object({
    namespace: NamespaceSchema.optional(),
    entries: z
      .array(z.object({ entity_path: EntityPathSchema, key: KeySchema, version: z.number().int().min(1).optional() }).strict())
      .min(1)
      .max(100)
      .describe('The entries an agent relied on; `version` = the version it read.'),
    outcome: z.enum(['success', 'failure']).describe('Whether acting on them worked.'),
    weight: z.number().gt(0).max(1).default(0.2).describe('How far one outcome moves confidence (0–1, default 0.2).'),
  })
  .strict();

// What an outcome did to each entry: declared once, in the client.
export type { OutcomeResult };

const MAX_ATTEMPTS = 8;

/**
 * Feedback from acting on memory: success moves confidence toward 1, failure toward 0, by
 * `weight` of the remaining distance (c + w(1−c), or c − wc), so repeated outcomes converge
 * rather than overshoot. Each update is a new version, written with compare-and-set.
 */
export const recordOutcome = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<{ results: OutcomeResult[] }> => {
  const input = parseInput(RecordOutcomeInput, raw);
  requireScope(ctx, 'write');
  const namespace = namespaceFor(ctx, input.namespace);
  for (const ref of input.entries) requirePath(ctx, ref.entity_path);
  const results: OutcomeResult[] = [];
  for (const ref of input.entries) results.push(await applyOne(deps, ctx, namespace, ref, input.outcome, input.weight));
  return { results };
};

const applyOne = async (
  deps: ServiceDeps,
  ctx: Context,
  namespace: string,
  ref: { entity_path: string; key: string; version?: number },
  outcome: 'success' | 'failure',
  weight: number,
): Promise<OutcomeResult> => {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const head = await deps.store.head({ namespace, entity_path: ref.entity_path, key: ref.key });
    if (!head || !isLive(head, deps.now())) throw new ServiceError('NOT_FOUND', `entry ${ref.entity_path} / ${ref.key} not found`);
    const base = { entity_path: ref.entity_path, key: ref.key, version: head.version, previous_confidence: head.confidence };
    if (ref.version !== undefined && ref.version !== head.version) return { ...base, status: 'stale', confidence: head.confidence };
    const moved = outcome === 'success' ? head.confidence + weight * (1 - head.confidence) : head.confidence - weight * head.confidence;
    const confidence = Math.round(moved * 1e6) / 1e6;
    const { content_hash: _h, version: _v, created_at: _c, written_at: _w, deleted: _d, namespace: _n, expires_at, ...fields } = head;
    try {
      const ttl_seconds = expires_at ? Math.max(1, Math.ceil((Date.parse(expires_at) - deps.now()) / 1000)) : undefined;
      const { entry } = await writeEntry(deps, ctx, {
        ...fields,
        namespace,
        confidence,
        provenance: { ...head.provenance, last_outcome: { outcome, by: ctx.agentId, request_id: ctx.requestId } },
        if_version: head.version,
        ...(ttl_seconds ? { ttl_seconds } : {}),
      });
      return { ...base, status: 'updated', version: entry.version, confidence: entry.confidence };
    } catch (error) {
      if (!(error instanceof ServiceError && error.code === 'CONFLICT')) throw error;
    }
  }
  throw new ServiceError('CONFLICT', `${ref.entity_path} / ${ref.key} is changing too fast; retry`);
};

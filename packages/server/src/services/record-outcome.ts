import type { OutcomeResult } from 'cairn-memory-client';
import { z } from 'zod';
import type { Entry } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { UNTESTED, withOutcome } from '../domain/evidence.ts';
import { EntityPathSchema, KeySchema, NamespaceSchema } from '../domain/names.ts';
import { parseInput } from '../domain/parse-input.ts';
import { LIMITS } from '../domain/limits.ts';
import { mapLimit } from '../domain/map-limit.ts';
import { namespaceFor, requirePath, requireScope } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { noteEvidence } from './judged-entries.ts';
import { type Appended, type HeadView, appendVersions } from './append-version.ts';
import { type DerivedWrite, audited, derivedDecision } from './write-entry.ts';

/**
 * The entry's provenance with the outcome noted as `last_outcome`. Never past the provenance
 * limit (64 KiB of JSON) the derived write checks: an entry whose own provenance is near it
 * still takes the outcome (confidence and evidence), its provenance kept without the note (and
 * without an older note, which would misname the last outcome).
 */
const withLastOutcome = (provenance: Record<string, unknown>, last: Record<string, unknown>): Record<string, unknown> => {
  const noted = { ...provenance, last_outcome: last };
  if (Buffer.byteLength(JSON.stringify(noted)) <= LIMITS.provenanceBytes) return noted;
  const { last_outcome: _older, ...own } = provenance;
  return own;
};

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

/** Evidence pointers written at once by one outcome (it names up to 100 entries). */
const NOTE_AHEAD = 16;

/**
 * Feedback from acting on memory: success moves confidence toward 1, failure toward 0, by
 * `weight` of the remaining distance (c + w(1−c), or c − wc), so repeated outcomes converge
 * rather than overshoot. Each outcome is also counted in the entry's evidence, whose status
 * follows the rule in domain/evidence.ts. Each update is a new version, and the entries are
 * updated together or not at all (as a batch write is): an entry that is missing refuses the
 * whole request before any confidence moves, so the caller can mend it and send it again
 * without counting an outcome twice. An entry listed twice is refused for the same reason.
 */
export const recordOutcome = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<{ results: OutcomeResult[] }> => {
  const input = parseInput(RecordOutcomeInput, raw);
  requireScope(ctx, 'write');
  const namespace = namespaceFor(ctx, input.namespace);
  for (const ref of input.entries) requirePath(ctx, ref.entity_path);
  // The version each entry's last attempt decided on; assigned in the callbacks.
  const read: (Entry | null)[] = input.entries.map(() => null);
  const appended = await appendVersions(
    deps,
    input.entries.map((ref, i) => {
      const address = { namespace, entity_path: ref.entity_path, key: ref.key };
      return {
        address,
        decide: (view: HeadView) =>
          derivedDecision(ctx, address, view, (current) => {
            read[i] = current;
            return outcomeWrite(ctx, ref, current, input.outcome, input.weight);
          }),
      };
    }),
  );
  const results: OutcomeResult[] = [];
  const updated: { entry: Entry; before: Entry }[] = [];
  for (const [i, ref] of input.entries.entries()) {
    const { entry } = audited(deps, ctx, appended[i] as Appended);
    const head = read[i] as Entry;
    const base = { entity_path: ref.entity_path, key: ref.key, version: head.version, previous_confidence: head.confidence };
    if (ref.version !== undefined && ref.version !== head.version) {
      results.push({ ...base, status: 'stale', confidence: head.confidence });
      continue;
    }
    updated.push({ entry, before: head });
    results.push({ ...base, status: 'updated', version: entry.version, confidence: entry.confidence, evidence: entry.evidence });
  }
  // The pointers briefings find judged entries by; the version is the truth, so a failed update
  // only delays a mention. A pointer is a round trip where records are objects (S3), and the
  // entries are distinct (each is one record): NOTE_AHEAD at once, not one after another.
  await mapLimit(updated, NOTE_AHEAD, ({ entry, before }) => noteEvidence(deps, entry, before).catch(() => {}));
  return { results };
};

/**
 * One entry's update, derived from whichever version the winning attempt read: a lost race
 * moves the winner's confidence (or finds the entry stale), never the one read before it.
 * Null (store nothing) when the caller read another version than the current one.
 */
const outcomeWrite = (
  ctx: Context,
  ref: { entity_path: string; key: string; version?: number },
  current: Entry | null,
  outcome: 'success' | 'failure',
  weight: number,
): DerivedWrite | null => {
  if (!current) throw new ServiceError('NOT_FOUND', `entry ${ref.entity_path} / ${ref.key} not found`);
  if (ref.version !== undefined && ref.version !== current.version) return null;
  const moved = outcome === 'success' ? current.confidence + weight * (1 - current.confidence) : current.confidence - weight * current.confidence;
  const { value, agent_id, event_type, memory_type, shared, tags, provenance, expires_at, links } = current;
  return {
    value,
    agent_id,
    event_type,
    memory_type,
    shared,
    tags,
    links: links ?? [],
    confidence: Math.round(moved * 1e6) / 1e6,
    // Versions written before evidence existed (filesystem, S3) carry none: untested.
    evidence: withOutcome(current.evidence ?? UNTESTED, outcome),
    provenance: withLastOutcome(provenance, { outcome, by: ctx.agentId, request_id: ctx.requestId }),
    expires_at,
  };
};

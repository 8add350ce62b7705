import type { RetentionPolicy } from 'cairn-memory-client';
import { z } from 'zod';
import { ServiceError } from '../../domain/errors.ts';
import { EntityPathSchema, NamespaceSchema, namespaceSegment, pathHasPrefix } from '../../domain/names.ts';
import { parseInput } from '../../domain/parse-input.ts';
import { allRecords } from '../../cortex/cortex-records.ts';
import type { RecordStore } from '../../ports/records.ts';
import { recordAudit } from '../audit-log.ts';
import { namespaceFor, pathVisible, requirePath, requireScope, requireWholeNamespace } from '../authorize.ts';
import type { Context, ServiceDeps } from '../context.ts';

/**
 * Shared records, so every replica applies the same policies. Id: `<namespace>/<path prefix>`
 * ('' = the whole namespace), the namespace as one segment (policyId). Every reader takes a
 * policy's namespace and path from its data, never from its id.
 */
export const RETENTION_POLICIES = 'retention/policies';

export type { RetentionPolicy };

const KeepVersions = z.number().int().min(1).max(1_000_000);
const KeepDays = z.number().min(0).max(36_500);

export const SetPolicyInput = z
  .object({
    namespace: NamespaceSchema.optional(),
    entity_path: EntityPathSchema.optional().describe('Entries at or under this path; absent: the whole namespace. The most specific policy applies.'),
    // Null is "not set", as the policy reads back: a policy listed can be sent again as it is.
    keep_versions: KeepVersions.nullish().describe('Keep the newest N versions of each entry (null or absent: no count).'),
    keep_days: KeepDays.nullish().describe('Keep versions written in the last D days (null or absent: no age).'),
  })
  .strict()
  .refine((p) => p.keep_versions != null || p.keep_days != null, { message: 'give keep_versions, keep_days or both' });

/**
 * A stored policy as setRetentionPolicy writes it, which the retention pass takes it to be:
 * one held to less (keep_versions 0, a number as its path) would prune history no policy the
 * API accepts could. Import checks archives against it.
 */
export const RetentionPolicyRecordSchema: z.ZodType<RetentionPolicy> = z
  .object({
    namespace: NamespaceSchema,
    entity_path: EntityPathSchema.nullable(),
    keep_versions: KeepVersions.nullable(),
    keep_days: KeepDays.nullable(),
    updated_at: z.iso.datetime(),
  })
  .strict()
  .refine((p) => p.keep_versions !== null || p.keep_days !== null, { message: 'keep_versions, keep_days or both must be set' });

export const PolicyTargetInput = z.object({ namespace: NamespaceSchema.optional(), entity_path: EntityPathSchema.optional() }).strict();

/**
 * A policy's record id. The namespace is one segment (namespaceSegment): written as it is,
 * namespace `acme/b`'s policy for `c` and namespace `acme`'s for `b/c` were both `acme/b/c`,
 * and either namespace's admin replaced or deleted the other's.
 */
const policyId = (namespace: string, path: string | null): string => `${namespaceSegment(namespace)}/${path ?? ''}`;

/**
 * Where releases before policyId wrote a policy: the namespace as it is. The same id as
 * policyId's for a namespace holding neither "/" nor "%"; for another, a policy still stored
 * there is its namespace's only if its data says so (another namespace's may have that id).
 */
const legacyPolicyId = (namespace: string, path: string | null): string => `${namespace}/${path ?? ''}`;

/**
 * The ids a policy of `namespace` for `path` may be stored under: its own, and the one an
 * earlier release gave it (the same for a namespace holding neither "/" nor "%").
 */
export const policyIds = (namespace: string, path: string | null): string[] => [...new Set([policyId(namespace, path), legacyPolicyId(namespace, path)])];

/** Whether a stored policy record is `namespace`'s policy for `path`. */
const isPolicyOf = (data: Record<string, unknown> | undefined, namespace: string, path: string | null): boolean =>
  data !== undefined && data.namespace === namespace && (data.entity_path ?? null) === path;

/** Every policy, for the retention pass (any replica). */
export const loadPolicies = async (records: RecordStore): Promise<RetentionPolicy[]> => {
  const policies: RetentionPolicy[] = [];
  for await (const record of allRecords(records, RETENTION_POLICIES)) policies.push(record.data as unknown as RetentionPolicy);
  return policies;
};

/** The most specific policy covering an entry of `namespace` at `path`, if any. */
export const policyFor = (policies: readonly RetentionPolicy[], namespace: string, path: string): RetentionPolicy | undefined => {
  let best: RetentionPolicy | undefined;
  for (const p of policies) {
    if (p.namespace !== namespace || (p.entity_path !== null && !pathHasPrefix(path, p.entity_path))) continue;
    if (!best || (p.entity_path?.length ?? -1) > (best.entity_path?.length ?? -1)) best = p;
  }
  return best;
};

/**
 * Versions are kept when they are among the newest `keep_versions` or younger than
 * `keep_days` (either keeps a version; the head is always kept). Versions are written in time
 * order, so what is kept is the newest run: this is the oldest version kept. `writtenAt`
 * reads one version's time (null: gone already); only the versions just below the kept run
 * are read, so a pass over entries already trimmed costs one read each.
 */
export const oldestKept = async (
  policy: RetentionPolicy,
  head: number,
  writtenAt: (version: number) => Promise<number | null>,
  now: number,
): Promise<number> => {
  let keepFrom = head;
  if (policy.keep_versions !== null) keepFrom = Math.min(keepFrom, Math.max(1, head - policy.keep_versions + 1));
  if (policy.keep_days !== null) {
    const cutoff = now - policy.keep_days * 86_400_000;
    for (let v = keepFrom - 1; v >= 1; v--) {
      const at = await writtenAt(v);
      if (at === null || at < cutoff) break;
      keepFrom = v;
    }
  }
  return keepFrom;
};

/**
 * Move a policy found under another namespace's id (an earlier release wrote it under its
 * legacyPolicyId) to its own id, unless a policy is there already: that one is newer.
 */
const rehome = async (records: RecordStore, data: Record<string, unknown>): Promise<void> => {
  const parsed = RetentionPolicyRecordSchema.safeParse(data);
  if (!parsed.success) return;
  await records.createRecord(RETENTION_POLICIES, policyId(parsed.data.namespace, parsed.data.entity_path), { ...parsed.data });
};

export const setRetentionPolicy = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<RetentionPolicy> => {
  requireScope(ctx, 'admin');
  const input = parseInput(SetPolicyInput, raw);
  const namespace = namespaceFor(ctx, input.namespace);
  if (input.entity_path !== undefined) requirePath(ctx, input.entity_path);
  else requireWholeNamespace(ctx, 'a retention policy without entity_path');
  const policy: RetentionPolicy = {
    namespace,
    entity_path: input.entity_path ?? null,
    keep_versions: input.keep_versions ?? null,
    keep_days: input.keep_days ?? null,
    updated_at: new Date(deps.now()).toISOString(),
  };
  const id = policyId(namespace, policy.entity_path);
  // Replace only this namespace's policy: a record another namespace's admin wrote under this
  // id (the old, ambiguous one: legacyPolicyId) moves to its own namespace's id first.
  const held = await deps.store.getRecord(RETENTION_POLICIES, id);
  if (held && !isPolicyOf(held.data, namespace, policy.entity_path)) await rehome(deps.store, held.data);
  await deps.store.putRecord(RETENTION_POLICIES, id, { ...policy });
  // The same policy under the id an earlier release gave it would be a second one.
  const legacy = legacyPolicyId(namespace, policy.entity_path);
  if (legacy !== id && isPolicyOf((await deps.store.getRecord(RETENTION_POLICIES, legacy))?.data, namespace, policy.entity_path)) {
    await deps.store.deleteRecord(RETENTION_POLICIES, legacy);
  }
  await recordAudit(deps, ctx, namespace, {
    action: 'retention.policy_set',
    target: { entity_path: policy.entity_path },
    changes: { keep_versions: policy.keep_versions, keep_days: policy.keep_days },
  });
  return policy;
};

export const listRetentionPolicies = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<{ policies: RetentionPolicy[] }> => {
  requireScope(ctx, 'admin');
  const namespace = namespaceFor(ctx, parseInput(PolicyTargetInput, raw ?? {}).namespace);
  // A confined key sees the policies of its own paths, and the namespace's, which names none.
  const visible = (p: RetentionPolicy) => p.entity_path === null || pathVisible(ctx, p.entity_path);
  return { policies: (await loadPolicies(deps.store)).filter((p) => p.namespace === namespace && visible(p)) };
};

export const deleteRetentionPolicy = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<void> => {
  requireScope(ctx, 'admin');
  const input = parseInput(PolicyTargetInput, raw ?? {});
  const namespace = namespaceFor(ctx, input.namespace);
  if (input.entity_path !== undefined) requirePath(ctx, input.entity_path);
  else requireWholeNamespace(ctx, 'the retention policy without entity_path');
  const path = input.entity_path ?? null;
  // Delete only this namespace's policy, under its id or the one an earlier release gave it
  // (legacyPolicyId), which another namespace's policy may hold: each is checked by its data.
  let deleted = false;
  for (const id of policyIds(namespace, path)) {
    const held = await deps.store.getRecord(RETENTION_POLICIES, id);
    if (held && isPolicyOf(held.data, namespace, path) && (await deps.store.deleteRecord(RETENTION_POLICIES, id))) deleted = true;
  }
  if (!deleted) throw new ServiceError('NOT_FOUND', `no retention policy for ${input.entity_path ?? 'the whole namespace'}`);
  await recordAudit(deps, ctx, namespace, { action: 'retention.policy_deleted', target: { entity_path: input.entity_path ?? null } });
};

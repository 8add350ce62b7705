import { z } from 'zod';
import { DIGEST_TYPE_NAMES } from '../../cortex/digests/registry.ts';

/**
 * Response shapes of the Cortex routes, for the OpenAPI document. Facts differ per digest
 * type (see the README's Cortex section), so they are documented as an open object.
 */
const Item = z.record(z.string(), z.unknown());

export const DigestSchema = z
  .object({
    scope: z.string().describe('"path:<entity_path>", "source:external/<name>" or "namespace:<namespace>".'),
    kind: z.enum(['path', 'source', 'namespace']),
    type: z.enum(DIGEST_TYPE_NAMES),
    namespace: z.string(),
    entity_path: z.string().nullable(),
    version: z.number().int().describe('Grows by one whenever the digest\'s content changes.'),
    compiled_at: z.string(),
    headline: z.string().describe('One line, for prompts.'),
    summary: Item.describe('Entries, keys, writers, confidence (min/max/mean/below_half) and the last change.'),
    facts: Item.describe('Domain facts of the type: incidents, repos, comms, projects; roll-ups of them for source and namespace digests.'),
    open_items: z.array(Item),
    recent_changes: z.array(Item),
    confidence_drops: z.array(Item),
    contested: z.array(Item),
    content_hash: z.string(),
  })
  .meta({ id: 'Digest' });

export const PatternSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['recurring_incidents', 'flapping_deploy', 'contested_key']),
    namespace: z.string(),
    scope: z.string(),
    entity_path: z.string(),
    title: z.string(),
    detail: Item,
    evidence: z.array(z.object({ entity_path: z.string(), key: z.string(), version: z.number(), at: z.string().nullable() })),
    detected_at: z.string(),
  })
  .meta({ id: 'Pattern' });

export const TraceSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['failed_deploy_then_incident', 'failed_ci_then_failure']),
    namespace: z.string(),
    service: z.string(),
    title: z.string(),
    reason: z.string().describe('Why the entries were linked, in words.'),
    chain: z.array(z.object({
      step: z.number(), role: z.enum(['cause', 'effect', 'fix', 'resolution']), entity_path: z.string(), key: z.string(),
      version: z.number(), event: z.string(), at: z.string().nullable(), summary: z.string(),
    })),
    window_ms: z.number(),
    detected_at: z.string(),
  })
  .meta({ id: 'Trace' });

export const CortexStatusSchema = z
  .object({
    status: z.enum(['active', 'standby', 'stopped']),
    worker_id: z.string().nullable(),
    heartbeat_at: z.string().nullable(),
    lag_ms: z.number(),
    queue_depth: z.number().nullable().describe('Scopes waiting to be compiled; null for keys without the admin scope.'),
    digests: z.number().nullable().describe('Digests the worker holds over every namespace; null for keys without the admin scope.'),
    last_compiled_at: z.string().nullable(),
    failing: z
      .object({
        since: z.string().describe('When the compile the worker keeps retrying first failed.'),
        attempts: z.number().describe('Failed attempts so far (retried with a delay doubling up to 30 s).'),
        error: z.string().optional().describe('The last error\'s message, at most 500 characters; for keys with the admin scope only.'),
      })
      .nullable()
      .describe('The compile the active worker keeps retrying; null while every compile works.'),
    workers: z.array(Item).describe('Every live worker; empty for keys without the admin scope.'),
  })
  .meta({ id: 'CortexStatus' });

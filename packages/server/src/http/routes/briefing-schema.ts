import type { Briefing } from 'cairn-memory-client';
import { z } from 'zod';
import type { Expect, SameUnion } from '../../domain/type-checks.ts';
import { DIGEST_TYPE_NAMES } from '../../cortex/digests/registry.ts';
import { PatternSchema, TraceSchema } from './cortex-schemas.ts';

/** What `GET /api/v1/briefing` answers (the client's Briefing), for the OpenAPI document. */

const Item = z.record(z.string(), z.unknown());

const OpenItem = z.object({
  kind: z.string(),
  entity_path: z.string(),
  key: z.string(),
  title: z.string(),
  status: z.string().nullable(),
  since: z.string().nullable().describe('When it became open (ISO 8601).'),
  detail: Item.optional(),
});

const RecentChange = z.object({
  entity_path: z.string(),
  key: z.string(),
  version: z.number().int(),
  agent_id: z.string(),
  event_type: z.string().nullable(),
  written_at: z.string(),
  confidence: z.number(),
  summary: z.string(),
});

const ConfidenceDrop = z.object({
  entity_path: z.string(),
  key: z.string(),
  version: z.number().int(),
  from: z.number(),
  to: z.number(),
  at: z.string(),
  by: z.string(),
  reason: z.string(),
});

const JudgedEntry = z.object({
  entity_path: z.string(),
  key: z.string(),
  version: z.number().int(),
  status: z.enum(['contested', 'discredited']),
  successes: z.number().int(),
  failures: z.number().int(),
  written_at: z.string(),
  summary: z.string(),
});

export const BriefingSchema = z
  .object({
    namespace: z.string(),
    entity_path: z.string().nullable().describe('The scope briefed on; null for the whole namespace.'),
    agent_id: z.string().nullable().describe('Who asked; their own writes are left out of recent_changes.'),
    generated_at: z.string(),
    as_of: z.string().nullable().describe('The past instant asked about, or null for now.'),
    cortex: z.object({
      status: z.enum(['active', 'standby', 'stopped']),
      last_compiled_at: z.string().nullable(),
      lag_ms: z.number(),
      compiled: z.boolean().describe('Whether the Cortex had compiled anything in this scope yet.'),
    }),
    overview: z.string().nullable(),
    digests: z.array(
      z.object({
        scope: z.string(),
        type: z.enum(DIGEST_TYPE_NAMES),
        version: z.number().int(),
        compiled_at: z.string(),
        headline: z.string(),
        facts: Item.optional().describe('The first thing dropped to fit max_chars.'),
      }),
    ),
    open_items: z.array(OpenItem),
    recent_changes: z.array(RecentChange),
    patterns: z.array(PatternSchema.pick({ id: true, kind: true, entity_path: true, title: true, detail: true, detected_at: true })),
    traces: z.array(TraceSchema.pick({ id: true, title: true, reason: true, chain: true, detected_at: true })),
    confidence_drops: z.array(ConfidenceDrop),
    contested: z.array(JudgedEntry).describe('Entries whose recorded outcomes disagree.'),
    tried_and_failed: z.array(JudgedEntry).optional().describe('With discredited=apart: entries acting on which kept failing.'),
    truncated: z.boolean().describe('Whether anything was left out to fit max_chars.'),
    size_chars: z.number().int().describe('Length of this answer as JSON, in characters.'),
  })
  .meta({ id: 'Briefing' });

// What is documented is what the client reads: a field added to one and not the other is a type error.
type _Documented = Expect<SameUnion<z.output<typeof BriefingSchema>, Briefing>>;

import type { Connector, ConnectorChange, ConnectorSettings } from 'cairn-memory-client';
import { z } from 'zod';
import type { Expect, SameUnion } from '../../domain/type-checks.ts';

/**
 * Response shapes of the connector routes, for the OpenAPI document: the client's Connector
 * (ConnectorView with its webhook URL) and ConnectorChange.
 */

const WebhookUrl = z.string().describe('The URL to paste into the provider (with ?api_key= for providers that cannot send headers).');

export const ConnectorSchema = z
  .object({
    name: z.string(),
    title: z.string(),
    hint: z.string(),
    enabled: z.boolean(),
    managed_by: z.enum(['config', 'api']).nullable().describe('"config": enabled by the server\'s environment, so the API cannot change it.'),
    has_signing_secret: z.boolean(),
    key_in_url: z.boolean().describe('Whether the webhook URL must carry ?api_key= (the provider cannot send headers).'),
    enabled_at: z.string().nullable(),
    rotated_at: z.string().nullable().describe('When the signing secret was last rotated since the connector was enabled; null if never. A secret shown on enable or rotate is in use while enabled_at and rotated_at are the ones that answer carried.'),
    settings: z.object({
      channels: z.array(z.string()).optional().describe('Slack: channel ids to monitor; empty = every channel.'),
      projects: z.record(z.string(), z.string()).optional().describe('Jira: project id or "board-<id>" → project key.'),
      learned_projects: z.record(z.string(), z.string()).optional().describe('Jira, as listed only: what earlier issue deliveries taught; `projects` overrides any of them.'),
    }),
    last_event_at: z.string().nullable(),
    counts: z.object({
      received: z.number().int(),
      written: z.number().int(),
      unchanged: z.number().int(),
      duplicates: z.number().int(),
      ignored: z.number().int(),
      rejected: z.number().int(),
    }),
    webhook_url: WebhookUrl,
  })
  .meta({ id: 'Connector' });

export const ConnectorListSchema = z.object({ connectors: z.array(ConnectorSchema) });

export const EnabledConnectorSchema = z.object({
  name: z.string(),
  enabled: z.literal(true),
  signing_secret: z.string().nullable().describe('Shown once; null when the connector was already on (it keeps its secret).'),
  enabled_at: z.string().nullable().optional().describe('With a signing secret: the enabled_at the connectors listing shows while it is in use.'),
  rotated_at: z.string().nullable().optional().describe('With a signing secret: null (a fresh enable has not been rotated).'),
  webhook_url: WebhookUrl,
});

export const DisabledConnectorSchema = z.object({ name: z.string(), enabled: z.literal(false), webhook_url: WebhookUrl });

export const RotatedConnectorSchema = z.object({
  name: z.string(),
  enabled: z.literal(true),
  signing_secret: z.string().describe('The new secret, shown once.'),
  enabled_at: z.string().nullable().describe('The enabled_at the connectors listing shows while this secret is in use.'),
  rotated_at: z.string().describe('The rotated_at the connectors listing shows while this secret is in use.'),
  webhook_url: WebhookUrl,
});

export const ConnectorSettingsAnswerSchema = z.object({
  name: z.string(),
  channels: z.array(z.string()),
  projects: z.record(z.string(), z.string()),
});

type Within<A, B> = [A] extends [B] ? true : false;

// What is documented is what the client reads: a field added to one and not the other is a type error.
type _Documented = [
  Expect<SameUnion<z.output<typeof ConnectorSchema>, Connector>>,
  // Each answer is a ConnectorChange, told apart more closely than the client's one type.
  Expect<Within<z.output<typeof EnabledConnectorSchema | typeof DisabledConnectorSchema | typeof RotatedConnectorSchema>, ConnectorChange>>,
  Expect<SameUnion<z.output<typeof ConnectorSettingsAnswerSchema>, { name: string } & Required<Omit<ConnectorSettings, 'learned_projects'>>>>,
];

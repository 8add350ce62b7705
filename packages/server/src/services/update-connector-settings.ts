import { z } from 'zod';
import { connectorNamed } from '../connectors/registry.ts';
import { parseInput } from '../domain/parse-input.ts';
import { recordAudit } from './audit-log.ts';
import { requireScope, requireWholeNamespace } from './authorize.ts';
import { changeConnectorRecord } from './connector-state.ts';
import type { Context, ServiceDeps } from './context.ts';

/** A Jira project id (digits) or "board-<id>": stored as a record key on every backend alike. */
const JIRA_ID = /^[A-Za-z0-9_-]{1,64}$/;

export const ConnectorSettingsInput = z
  .object({
    channels: z.array(z.string().regex(/^[A-Z0-9]{1,32}$/, { error: 'expected a Slack channel id such as C0123ABCD' })).max(1000).optional()
      .describe('Slack: channel ids to monitor; empty = every channel (CAIRN_CONNECTOR_SLACK_CHANNELS overrides).'),
    projects: z.record(z.string(), z.string().regex(/^[A-Z][A-Z0-9_]{0,31}$/, { error: 'expected a Jira project key such as OPS' }))
      // Each id named as the field: a record's own key check only says "Invalid key in record".
      .superRefine((projects, ctx) => {
        for (const id of Object.keys(projects)) {
          if (!JIRA_ID.test(id)) ctx.addIssue({ code: 'custom', path: [id.slice(0, 64)], message: 'expected a Jira project id such as 10001, or "board-<id>"' });
        }
      })
      .optional()
      .describe('Jira: project id or "board-<id>" → project key, for sprint and version events that carry no key.'),
  })
  .strict();

/**
 * Change what a connector captures; its switch and secret are untouched: written over the
 * record as read (changeConnectorRecord), so a disable or rotation racing it is kept.
 */
export const updateConnectorSettings = async (deps: ServiceDeps, ctx: Context, name: string, raw: unknown) => {
  requireScope(ctx, 'admin');
  // Its events become entries anywhere in the namespace.
  requireWholeNamespace(ctx, "a connector's settings");
  connectorNamed(name);
  const input = parseInput(ConnectorSettingsInput, raw);
  const data = (await changeConnectorRecord(deps, ctx.namespace, name, (read) => ({
    ...read,
    ...(input.channels ? { channels: input.channels } : {}),
    ...(input.projects ? { projects: input.projects } : {}),
  })))!;
  await recordAudit(deps, ctx, ctx.namespace, { action: 'connector.settings_changed', target: { connector: name }, changes: input });
  return { name, channels: (data.channels as string[] | undefined) ?? [], projects: (data.projects as Record<string, string> | undefined) ?? {} };
};

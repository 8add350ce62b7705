import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Connector, ConnectorSettings } from '../connectors/connector.ts';
import { ServiceError } from '../domain/errors.ts';
import { parseInput } from '../domain/parse-input.ts';
import type { ServiceDeps } from './context.ts';

/** Where a connector's switch and secret live: shared records, so every replica agrees. */
export const settingsCollection = (namespace: string): string => `connectors/${namespace}`;

export interface ConnectorState {
  enabled: boolean;
  secret: string | null;
  /** `config` when CAIRN_CONNECTOR_<NAME>_SECRET enables it: then the API cannot change it. */
  managedBy: 'config' | 'api' | null;
  settings: ConnectorSettings;
  enabled_at: string | null;
}

/** A new signing secret: 32 random bytes, URL-safe, as providers accept any string. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/**
 * Body of enable / rotate: providers that issue their own signing secret (PagerDuty, Slack)
 * need it given to Cairn; for the others Cairn generates one when none is given.
 */
export const SecretInput = z
  .object({ signing_secret: z.string().min(16).max(512).optional().describe("The provider's signing secret, when the provider issues it (PagerDuty, Slack).") })
  .strict();

export const secretFor = (connector: Connector, raw: unknown): string => {
  const given = parseInput(SecretInput, raw ?? {}).signing_secret;
  if (given) return given;
  if (connector.issuesOwnSecret) {
    throw new ServiceError('VALIDATION_FAILED', `${connector.title} issues its own signing secret: pass it as signing_secret`, {
      details: [{ field: 'signing_secret', message: `copy it from ${connector.title}` }],
    });
  }
  return newSecret();
};

export const connectorState = async (deps: ServiceDeps, namespace: string, connector: Connector): Promise<ConnectorState> => {
  const fromConfig = deps.config.connectorSecrets[connector.name];
  const record = await deps.store.getRecord(settingsCollection(namespace), connector.name);
  const data = (record?.data ?? {}) as { enabled?: boolean; secret?: string; enabled_at?: string; channels?: string[]; projects?: Record<string, string> };
  const settings: ConnectorSettings = {
    channels: connector.name === 'slack' && deps.config.slackChannels.length > 0 ? [...deps.config.slackChannels] : (data.channels ?? []),
    projects: data.projects ?? {},
  };
  if (fromConfig) return { enabled: true, secret: fromConfig, managedBy: 'config', settings, enabled_at: null };
  if (data.enabled && data.secret) return { enabled: true, secret: data.secret, managedBy: 'api', settings, enabled_at: data.enabled_at ?? null };
  return { enabled: false, secret: null, managedBy: null, settings, enabled_at: null };
};

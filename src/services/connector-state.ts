import { randomBytes } from 'node:crypto';
import type { Connector, ConnectorSettings } from '../connectors/connector.ts';
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

export const connectorState = async (deps: ServiceDeps, namespace: string, connector: Connector): Promise<ConnectorState> => {
  const fromConfig = deps.config.connectorSecrets[connector.name];
  const record = await deps.store.getRecord(settingsCollection(namespace), connector.name);
  const data = (record?.data ?? {}) as { enabled?: boolean; secret?: string; enabled_at?: string; channels?: string[]; projects?: Record<string, string> };
  const settings: ConnectorSettings = {
    channels: connector.name === 'slack' && deps.config.slackChannels.length > 0 ? deps.config.slackChannels : (data.channels ?? []),
    projects: data.projects ?? {},
  };
  if (fromConfig) return { enabled: true, secret: fromConfig, managedBy: 'config', settings, enabled_at: null };
  if (data.enabled && data.secret) return { enabled: true, secret: data.secret, managedBy: 'api', settings, enabled_at: data.enabled_at ?? null };
  return { enabled: false, secret: null, managedBy: null, settings, enabled_at: null };
};

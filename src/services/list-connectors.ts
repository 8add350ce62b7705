import type { ConnectorSettings } from '../connectors/connector.ts';
import { CONNECTORS } from '../connectors/registry.ts';
import type { Context, ServiceDeps } from './context.ts';
import { requireScope } from './authorize.ts';
import { connectorState } from './connector-state.ts';
import type { DeliveryCounts } from './delivery-counters.ts';

export interface ConnectorView {
  name: string;
  title: string;
  hint: string;
  enabled: boolean;
  managed_by: 'config' | 'api' | null;
  has_signing_secret: boolean;
  /** Whether the webhook URL must carry ?api_key= (the provider cannot send headers). */
  key_in_url: boolean;
  enabled_at: string | null;
  /** What it captures: Slack's monitored channels, Jira's project map (for the dashboard's form). */
  settings: ConnectorSettings;
  last_event_at: string | null;
  counts: Omit<DeliveryCounts, 'last_event_at'>;
}

/** Every connector with its state and counters; never its secret. */
export const listConnectors = async (deps: ServiceDeps, ctx: Context): Promise<ConnectorView[]> => {
  requireScope(ctx, 'admin');
  return Promise.all(
    [...CONNECTORS.values()].map(async (connector) => {
      const [state, stats] = await Promise.all([connectorState(deps, ctx.namespace, connector), deps.deliveries.read(ctx.namespace, connector.name)]);
      const { last_event_at, ...counts } = stats;
      return {
        name: connector.name,
        title: connector.title,
        hint: connector.hint,
        enabled: state.enabled,
        managed_by: state.managedBy,
        has_signing_secret: state.secret !== null,
        key_in_url: !connector.sendsHeaders,
        enabled_at: state.enabled_at,
        settings: state.settings,
        last_event_at,
        counts,
      };
    }),
  );
};

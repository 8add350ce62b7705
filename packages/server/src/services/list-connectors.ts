import type { ConnectorView } from 'cairn-memory-client';
import { CONNECTORS } from '../connectors/registry.ts';
import type { Context, ServiceDeps } from './context.ts';
import { requireScope } from './authorize.ts';
import { learnedFacts } from './connector-memory.ts';
import { connectorState } from './connector-state.ts';

// A connector as listed: declared once, in the client.
export type { ConnectorView };

/** Every connector with its state and counters; never its secret. */
export const listConnectors = async (deps: ServiceDeps, ctx: Context): Promise<ConnectorView[]> => {
  requireScope(ctx, 'admin');
  return Promise.all(
    [...CONNECTORS.values()].map(async (connector) => {
      const [state, stats, learned] = await Promise.all([
        connectorState(deps, ctx.namespace, connector),
        deps.deliveries.read(ctx.namespace, connector.name),
        connector.learnedSettings ? learnedFacts(deps.store, ctx.namespace, connector.name).then(connector.learnedSettings) : {},
      ]);
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
        rotated_at: state.rotated_at,
        settings: { ...state.settings, ...learned },
        last_event_at,
        counts,
      };
    }),
  );
};

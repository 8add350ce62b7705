import type { DeliveryLog } from 'cairn-memory-client';
import { connectorNamed } from '../connectors/registry.ts';
import { requireScope, requireWholeNamespace } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';

/**
 * A connector's recent deliveries, newest first: when, which event, its delivery id, what
 * became of it and why. Administration, like the rest of connector management: the reasons
 * name signature failures, which only the people who hold the secret need to read, and the
 * entries deliveries stored anywhere in the namespace, which a key confined to some paths may
 * not see.
 */
export const listDeliveries = async (deps: ServiceDeps, ctx: Context, name: string): Promise<DeliveryLog> => {
  requireScope(ctx, 'admin');
  requireWholeNamespace(ctx, "a connector's deliveries");
  const connector = connectorNamed(name);
  return { name: connector.name, deliveries: await deps.deliveryLog.read(ctx.namespace, connector.name) };
};

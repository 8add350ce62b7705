import { connectorNamed } from '../connectors/registry.ts';
import { ServiceError } from '../domain/errors.ts';
import { recordAudit } from './audit-log.ts';
import { requireScope, requireWholeNamespace } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { connectorState, settingsCollection } from './connector-state.ts';

/** Turn a connector off: its webhook answers 404 and its secret is forgotten. */
export const disableConnector = async (deps: ServiceDeps, ctx: Context, name: string): Promise<{ name: string; enabled: false }> => {
  requireScope(ctx, 'admin');
  // Its events become entries anywhere in the namespace.
  requireWholeNamespace(ctx, "a connector's settings");
  const connector = connectorNamed(name);
  const state = await connectorState(deps, ctx.namespace, connector);
  if (state.managedBy === 'config') {
    throw new ServiceError('CONFLICT', `${name} is enabled by CAIRN_CONNECTOR_${name.toUpperCase()}_SECRET; unset it there`);
  }
  const record = await deps.store.getRecord(settingsCollection(ctx.namespace), name);
  const { secret: _secret, ...rest } = (record?.data ?? {}) as Record<string, unknown>;
  await deps.store.putRecord(settingsCollection(ctx.namespace), name, { ...rest, enabled: false });
  await recordAudit(deps, ctx, ctx.namespace, { action: 'connector.disabled', target: { connector: name } });
  return { name, enabled: false };
};

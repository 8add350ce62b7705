import { connectorNamed } from '../connectors/registry.ts';
import { ServiceError } from '../domain/errors.ts';
import { recordAudit } from './audit-log.ts';
import { requireScope, requireWholeNamespace } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { changeConnectorRecord } from './connector-state.ts';

/**
 * Turn a connector off: its webhook answers 404 and its secret is forgotten. Written over the
 * record as read (changeConnectorRecord), so a settings change or rotation racing it cannot
 * put the secret back.
 */
export const disableConnector = async (deps: ServiceDeps, ctx: Context, name: string): Promise<{ name: string; enabled: false }> => {
  requireScope(ctx, 'admin');
  // Its events become entries anywhere in the namespace.
  requireWholeNamespace(ctx, "a connector's settings");
  const connector = connectorNamed(name);
  if (deps.config.connectorSecrets[connector.name]) {
    throw new ServiceError('CONFLICT', `${name} is enabled by CAIRN_CONNECTOR_${name.toUpperCase()}_SECRET; unset it there`);
  }
  await changeConnectorRecord(deps, ctx.namespace, name, (data) => {
    const { secret: _secret, ...rest } = data;
    return { ...rest, enabled: false };
  });
  await recordAudit(deps, ctx, ctx.namespace, { action: 'connector.disabled', target: { connector: name } });
  return { name, enabled: false };
};

import { connectorNamed } from '../connectors/registry.ts';
import { ServiceError } from '../domain/errors.ts';
import { recordAudit } from './audit-log.ts';
import { requireScope, requireWholeNamespace } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { noteSealed, requireSecretBox } from './secrets/secret-keys.ts';
import { connectorState, givenSecret, secretFor, settingsCollection } from './connector-state.ts';
import type { EnabledConnector } from './enable-connector.ts';

/** Replace an enabled connector's signing secret; the old one stops verifying at once. */
export const rotateConnectorSecret = async (deps: ServiceDeps, ctx: Context, name: string, raw?: unknown): Promise<EnabledConnector> => {
  requireScope(ctx, 'admin');
  // Its events become entries anywhere in the namespace.
  requireWholeNamespace(ctx, "a connector's secret");
  const connector = connectorNamed(name);
  const state = await connectorState(deps, ctx.namespace, connector);
  if (state.managedBy === 'config') {
    throw new ServiceError('CONFLICT', `${name}'s secret comes from CAIRN_CONNECTOR_${name.toUpperCase()}_SECRET; rotate it there`);
  }
  if (!state.enabled) throw new ServiceError('CONFLICT', `${name} is not enabled; enable it first`);
  const record = await deps.store.getRecord(settingsCollection(ctx.namespace), name);
  const secret = secretFor(connector, givenSecret(raw));
  const box = requireSecretBox(deps.config);
  await deps.store.putRecord(settingsCollection(ctx.namespace), name, {
    ...record?.data,
    secret: box.seal(secret),
    rotated_at: new Date(deps.now()).toISOString(),
  });
  await noteSealed(deps.store, box);
  await recordAudit(deps, ctx, ctx.namespace, { action: 'connector.secret_rotated', target: { connector: name } });
  return { name, enabled: true, signing_secret: secret };
};

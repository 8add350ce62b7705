import { connectorNamed } from '../connectors/registry.ts';
import { ServiceError } from '../domain/errors.ts';
import { recordAudit } from './audit-log.ts';
import { requireScope, requireWholeNamespace } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { noteSealed, requireSecretBox } from './secrets/secret-keys.ts';
import { changeConnectorRecord, givenSecret, secretFor } from './connector-state.ts';
import type { EnabledConnector } from './enable-connector.ts';

/**
 * Replace an enabled connector's signing secret; the old one stops verifying at once. Written
 * over the record as read (changeConnectorRecord): a disable racing it wins or loses whole (a
 * rotation after it is 409), and a settings change racing it keeps the new secret.
 */
export const rotateConnectorSecret = async (deps: ServiceDeps, ctx: Context, name: string, raw?: unknown): Promise<EnabledConnector> => {
  requireScope(ctx, 'admin');
  // Its events become entries anywhere in the namespace.
  requireWholeNamespace(ctx, "a connector's secret");
  const connector = connectorNamed(name);
  if (deps.config.connectorSecrets[connector.name]) {
    throw new ServiceError('CONFLICT', `${name}'s secret comes from CAIRN_CONNECTOR_${name.toUpperCase()}_SECRET; rotate it there`);
  }
  let secret: string | undefined;
  let box: ReturnType<typeof requireSecretBox> | undefined;
  const written = await changeConnectorRecord(deps, ctx.namespace, name, (data) => {
    if (!(data.enabled && data.secret)) throw new ServiceError('CONFLICT', `${name} is not enabled; enable it first`);
    // The body is read after the state checks (a 409 before a 422), as before.
    secret ??= secretFor(connector, givenSecret(raw));
    box ??= requireSecretBox(deps.config);
    return { ...data, secret: box.seal(secret), rotated_at: new Date(deps.now()).toISOString() };
  });
  await noteSealed(deps.store, box!);
  await recordAudit(deps, ctx, ctx.namespace, { action: 'connector.secret_rotated', target: { connector: name } });
  return { name, enabled: true, signing_secret: secret!, enabled_at: written!.enabled_at ?? null, rotated_at: written!.rotated_at! };
};

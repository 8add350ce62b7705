import { createHash, timingSafeEqual } from 'node:crypto';
import { connectorNamed } from '../connectors/registry.ts';
import { ServiceError } from '../domain/errors.ts';
import { recordAudit } from './audit-log.ts';
import { requireScope, requireWholeNamespace } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { noteSealed, requireSecretBox } from './secrets/secret-keys.ts';
import { connectorState, givenSecret, secretFor, settingsCollection } from './connector-state.ts';

export interface EnabledConnector {
  name: string;
  enabled: true;
  /** Shown here and on rotate only; store it in the provider now. */
  signing_secret: string;
}

/**
 * Turn a connector on with a fresh signing secret, stored so every replica verifies with it.
 * Enabling one that is already on keeps its secret and does not show it again (rotate does).
 * The body is checked first, so a body gets the same answer whether the connector is on or
 * off; a secret given for one that is already on must be the one it has (a setup script run
 * again), since enable never replaces it: rotate-secret does, and says so in the audit log.
 */
export const enableConnector = async (deps: ServiceDeps, ctx: Context, name: string, raw?: unknown): Promise<EnabledConnector | { name: string; enabled: true; signing_secret: null }> => {
  requireScope(ctx, 'admin');
  // Its events become entries anywhere in the namespace.
  requireWholeNamespace(ctx, "a connector's settings");
  const connector = connectorNamed(name);
  const given = givenSecret(raw);
  const state = await connectorState(deps, ctx.namespace, connector);
  if (state.managedBy === 'config') {
    throw new ServiceError('CONFLICT', `${name} is enabled by CAIRN_CONNECTOR_${name.toUpperCase()}_SECRET; change it there`);
  }
  if (state.enabled) {
    if (given !== undefined && !sameSecret(given, state.secret ?? '')) throw otherSecret(name);
    return { name, enabled: true, signing_secret: null };
  }
  const secret = secretFor(connector, given);
  const box = requireSecretBox(deps.config);
  const record = await deps.store.getRecord(settingsCollection(ctx.namespace), name);
  await deps.store.putRecord(settingsCollection(ctx.namespace), name, {
    ...record?.data,
    enabled: true,
    secret: box.seal(secret),
    enabled_at: new Date(deps.now()).toISOString(),
  });
  await noteSealed(deps.store, box);
  await recordAudit(deps, ctx, ctx.namespace, { action: 'connector.enabled', target: { connector: name } });
  return { name, enabled: true, signing_secret: secret };
};

/** Compared by digest, so the time taken tells nothing about either secret. */
const sameSecret = (a: string, b: string): boolean => {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
};

/** A different secret for a connector that is on: answering 200 and keeping the old one would leave every new delivery 401. */
const otherSecret = (name: string): ServiceError =>
  new ServiceError('CONFLICT', `${name} is already enabled with another signing secret; to replace it, POST /api/v1/connectors/${name}/rotate-secret with {"signing_secret": "…"}`, {
    details: [{ field: 'signing_secret', message: 'differs from the secret in use; rotate-secret replaces it' }],
  });

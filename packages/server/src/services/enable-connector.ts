import { createHash, timingSafeEqual } from 'node:crypto';
import { connectorNamed } from '../connectors/registry.ts';
import { ServiceError } from '../domain/errors.ts';
import { recordAudit } from './audit-log.ts';
import { requireScope, requireWholeNamespace } from './authorize.ts';
import type { Context, ServiceDeps } from './context.ts';
import { noteSealed, requireSecretBox } from './secrets/secret-keys.ts';
import { changeConnectorRecord, givenSecret, secretFor, secretOf } from './connector-state.ts';

export interface EnabledConnector {
  name: string;
  enabled: true;
  /** Shown here and on rotate only; store it in the provider now. */
  signing_secret: string;
  /** The `enabled_at` and `rotated_at` the connectors listing shows while this secret is the one in use. */
  enabled_at: string | null;
  rotated_at: string | null;
}

/**
 * Turn a connector on with a fresh signing secret, stored so every replica verifies with it.
 * Enabling one that is already on keeps its secret and does not show it again (rotate does).
 * The body is checked first, so a body gets the same answer whether the connector is on or
 * off; a secret given for one that is already on must be the one it has (a setup script run
 * again), since enable never replaces it: rotate-secret does, and says so in the audit log.
 * Of enables racing (two admins, two replicas), only the one whose write turned it on answers
 * the secret; the others find it on and answer `signing_secret: null`, as for one already on.
 */
export const enableConnector = async (deps: ServiceDeps, ctx: Context, name: string, raw?: unknown): Promise<EnabledConnector | { name: string; enabled: true; signing_secret: null }> => {
  requireScope(ctx, 'admin');
  // Its events become entries anywhere in the namespace.
  requireWholeNamespace(ctx, "a connector's settings");
  const connector = connectorNamed(name);
  const given = givenSecret(raw);
  if (deps.config.connectorSecrets[connector.name]) {
    throw new ServiceError('CONFLICT', `${name} is enabled by CAIRN_CONNECTOR_${name.toUpperCase()}_SECRET; change it there`);
  }
  let secret: string | undefined;
  let box: ReturnType<typeof requireSecretBox> | undefined;
  const written = await changeConnectorRecord(deps, ctx.namespace, name, async (data) => {
    const current = await secretOf(deps, ctx.namespace, name, data);
    if (current !== null) {
      if (given !== undefined && !sameSecret(given, current)) throw otherSecret(name);
      return null;
    }
    secret ??= secretFor(connector, given);
    box ??= requireSecretBox(deps.config);
    // A fresh secret: the rotation time of an earlier life does not describe it.
    const { rotated_at: _rotated, ...rest } = data;
    return { ...rest, enabled: true, secret: box.seal(secret), enabled_at: new Date(deps.now()).toISOString() };
  });
  if (written === null || secret === undefined || box === undefined) return { name, enabled: true, signing_secret: null };
  await noteSealed(deps.store, box);
  await recordAudit(deps, ctx, ctx.namespace, { action: 'connector.enabled', target: { connector: name } });
  return { name, enabled: true, signing_secret: secret, enabled_at: written.enabled_at!, rotated_at: null };
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

import { type Access, type Scope, hasScope, unrestricted } from '../domain/access.ts';
import { ServiceError } from '../domain/errors.ts';
import { pathHasPrefix } from '../domain/names.ts';
import type { Context } from './context.ts';

/**
 * The checks every service makes with the caller's Access. Services call these before they
 * touch data, so every transport (REST, MCP, CLI) is held to the same rules. A context
 * without `access` is the server's own work, which may do everything.
 */
const accessOf = (ctx: Context): Access => ctx.access ?? unrestricted(null);

export const requireScope = (ctx: Context, scope: Scope): void => {
  if (!hasScope(accessOf(ctx), scope)) throw new ServiceError('FORBIDDEN', `this key lacks the "${scope}" scope`);
};

/** The namespace to work in: the one asked for if the key may use it, else the caller's own. */
export const namespaceFor = (ctx: Context, requested: string | undefined): string => {
  const namespace = requested ?? ctx.namespace;
  const allowed = accessOf(ctx).namespaces;
  if (allowed !== '*' && !allowed.includes(namespace)) {
    throw new ServiceError('FORBIDDEN', `this key may not use namespace "${namespace.slice(0, 128)}"`);
  }
  return namespace;
};

/** Whether the key's prefixes cover `path` (always, for keys without prefixes). */
export const pathVisible = (ctx: Context, path: string): boolean => {
  const prefixes = accessOf(ctx).prefixes;
  return prefixes === null || prefixes.some((prefix) => pathHasPrefix(path, prefix));
};

export const requirePath = (ctx: Context, path: string): void => {
  if (!pathVisible(ctx, path)) {
    throw new ServiceError('FORBIDDEN', `this key may only use entity paths under ${accessOf(ctx).prefixes?.join(', ')}`);
  }
};

/**
 * For settings of a whole namespace (a retention policy for all of it, connectors, teams): a
 * key confined to some entity paths may not change them, as it may not export or forget
 * outside them. `what` names the setting in the refusal.
 */
export const requireWholeNamespace = (ctx: Context, what: string): void => {
  const prefixes = accessOf(ctx).prefixes;
  if (prefixes !== null) throw new ServiceError('FORBIDDEN', `this key is confined to ${prefixes.join(', ')}; ${what} concerns every path of the namespace`);
};

/**
 * The prefix a list or search may cover: the one asked for, which must lie within the key's
 * prefixes; for a confined key that names none, its only prefix. A key with several prefixes
 * must say which one (lists are ordered ranges; one range per call keeps cursors simple).
 */
export const listPrefixFor = (ctx: Context, requested: string | undefined): string | undefined => {
  const prefixes = accessOf(ctx).prefixes;
  if (prefixes === null) return requested;
  if (requested !== undefined) {
    requirePath(ctx, requested);
    return requested;
  }
  if (prefixes.length === 1) return prefixes[0];
  throw new ServiceError('FORBIDDEN', `this key is confined to ${prefixes.join(', ')}: pass entity_path with one of them`);
};

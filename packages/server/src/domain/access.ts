import type { Scope } from 'cairn-memory-client';
import type { Expect, SameUnion } from './type-checks.ts';

/** What a caller may do (SPEC §6): scopes, entity-path prefixes, namespaces. */

// `Scope` is part of the admin API (keys carry it): declared once, in the client.
export type { Scope };

/** Every scope, for validation: exactly the members of `Scope`, as the check below holds it. */
export const SCOPES = ['read', 'write', 'admin'] as const satisfies readonly Scope[];
type _EveryScope = Expect<SameUnion<(typeof SCOPES)[number], Scope>>;

export interface Access {
  /** The managed key's id; `static` for CAIRN_API_KEYS; null in open mode or for the system. */
  keyId: string | null;
  scopes: readonly Scope[];
  /** Entity-path prefixes the key is confined to (segment-wise); null = every path. */
  prefixes: readonly string[] | null;
  /** Namespaces the key may use: its own, or every one (`*`) for static keys and open mode. */
  namespaces: '*' | readonly string[];
  team: string | null;
}

/** Open mode, static admin keys and the server's own work (Cortex) may do everything. */
export const unrestricted = (keyId: string | null): Access => ({ keyId, scopes: ['admin'], prefixes: null, namespaces: '*', team: null });

/**
 * Whether the key sees the whole store: every namespace, every path (static keys, open mode,
 * the server's own work). Figures over the whole store (/metrics, the Cortex's digests and
 * queue, a retention pass's counts) are for such keys only: they tell of other namespaces.
 */
export const seesWholeStore = (access: Access): boolean => access.namespaces === '*' && access.prefixes === null;

/** `admin` includes `read` and `write`; `read` and `write` are separate (a webhook key may only write). */
export const hasScope = (access: Access, scope: Scope): boolean => access.scopes.includes('admin') || access.scopes.includes(scope);

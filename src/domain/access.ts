/** What a caller may do (SPEC §6): scopes, entity-path prefixes, namespaces. */
export type Scope = 'read' | 'write' | 'admin';

export const SCOPES: readonly Scope[] = ['read', 'write', 'admin'];

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

/** `admin` includes `read` and `write`; `read` and `write` are separate (a webhook key may only write). */
export const hasScope = (access: Access, scope: Scope): boolean => access.scopes.includes('admin') || access.scopes.includes(scope);

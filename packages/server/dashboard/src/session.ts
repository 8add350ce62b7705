import type { Whoami } from 'cairn-memory-client';
import { ApiError, createApi } from './api/client.ts';

/** Who is using the dashboard: the key (null in open mode) and what it may do. */
export interface Session {
  key: string | null;
  admin: boolean;
  read: boolean;
  /** Entity-path prefixes the key is confined to; null = every path. */
  prefixes: string[] | null;
}

const STORAGE_KEY = 'cairn.api-key';

/** The key kept by a previous visit: this tab's (sessionStorage), else a remembered one. */
export const storedKey = (): string | null => sessionStorage.getItem(STORAGE_KEY) ?? localStorage.getItem(STORAGE_KEY);

/** Kept for this tab only unless the user asks to be remembered on this device. */
export const storeKey = (key: string, remember: boolean): void => {
  sessionStorage.setItem(STORAGE_KEY, key);
  if (remember) localStorage.setItem(STORAGE_KEY, key);
};

export const forgetKey = (): void => {
  sessionStorage.removeItem(STORAGE_KEY);
  localStorage.removeItem(STORAGE_KEY);
};

/** Whether the server wants a key at all (public, so asking costs no failed request). */
export const keyRequired = async (): Promise<boolean> => {
  const res = await fetch('/dashboard/auth.json', { cache: 'no-store' });
  if (!res.ok) throw new ApiError(res.status, 'ERROR', 'the server did not say whether it needs a key');
  return ((await res.json()) as { key_required: boolean }).key_required;
};

/** What the key may do, from GET /api/v1/whoami; a refused key throws 401. */
export const probeSession = async (key: string | null): Promise<Session> => {
  try {
    const me = await createApi(key, () => {}).get<Whoami>('/api/v1/whoami');
    const admin = me.scopes.includes('admin');
    return { key, admin, read: admin || me.scopes.includes('read'), prefixes: me.prefixes };
  } catch (error) {
    // Only a key without the read scope (a webhook key) is refused here with 403.
    if (error instanceof ApiError && error.status === 403) return { key, admin: false, read: false, prefixes: null };
    throw error;
  }
};

import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api/client.ts';
import type { LiveHub } from './live.ts';
import type { Arrivals } from './memory/recent.ts';
import type { Session } from './session.ts';

export interface AppContext {
  api: Api;
  session: Session;
  live: LiveHub;
  arrivals: Arrivals;
  /**
   * In open mode (no key yet), the first key issued makes the server want a key on every
   * request. `firstKey` is told of it before anything is refused: an admin key becomes this
   * session's key (answering true); any other key leaves the session as it is, its refusals
   * held back (answering false), so the key stays on screen until `signOut` is called.
   */
  firstKey(key: string, scopes: string[]): Promise<boolean>;
  signOut(notice?: string | null): void;
}

export const App = createContext<AppContext | null>(null);

export const useApp = (): AppContext => {
  const value = useContext(App);
  if (!value) throw new Error('useApp outside the signed-in app');
  return value;
};

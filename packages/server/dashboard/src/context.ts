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
}

export const App = createContext<AppContext | null>(null);

export const useApp = (): AppContext => {
  const value = useContext(App);
  if (!value) throw new Error('useApp outside the signed-in app');
  return value;
};

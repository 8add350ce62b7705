import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, createApi } from './api/client.ts';
import { Loading, ErrorNote } from './components/states.tsx';
import { App as AppCtx } from './context.ts';
import { LiveHub } from './live.ts';
import { Arrivals } from './memory/recent.ts';
import { AuditPage } from './pages/audit-page.tsx';
import { ConnectorsPage } from './pages/connectors-page.tsx';
import { CortexPage } from './pages/cortex-page.tsx';
import { KeysPage } from './pages/keys-page.tsx';
import { LoginPage } from './pages/login-page.tsx';
import { MemoryPage } from './memory/memory-page.tsx';
import { SearchPage } from './pages/search-page.tsx';
import { type Page, currentRoute, redirect, useRoute } from './router.ts';
import { type Session, forgetKey, keyRequired, probeSession, storeKey, storedKey } from './session.ts';
import { Shell } from './shell.tsx';

type Boot = { kind: 'starting' } | { kind: 'failed'; error: ApiError } | { kind: 'login'; notice: string | null } | { kind: 'ready'; session: Session; keyed: boolean };

const refusal = (error: unknown): string =>
  error instanceof ApiError && error.status === 401 ? 'That key was refused: it is unknown, revoked or mistyped.' : error instanceof Error ? error.message : String(error);

/** Sign-in (when keys are on), then the pages the key may see. */
export const App = () => {
  const [boot, setBoot] = useState<Boot>({ kind: 'starting' });
  const route = useRoute();

  // While a first key issued in open mode is on screen, refusals do not sign the user out.
  const holdRefusals = useRef(false);
  // The key of the session shown (switched before the new session renders, in firstKey).
  const currentKey = useRef<string | null>(null);
  if (boot.kind === 'ready') currentKey.current = boot.session.key;
  const signOut = (notice: string | null = null) => {
    holdRefusals.current = false;
    forgetKey();
    setBoot({ kind: 'login', notice });
  };
  // A refusal of a key no longer in use (a request sent just before the session switched to a
  // first key) is no reason to sign out.
  const onRefused = (key: string | null) => {
    if (holdRefusals.current || key !== currentKey.current) return;
    signOut('The server refused the key (revoked or changed); enter another.');
  };
  const firstKey = async (key: string, scopes: string[]): Promise<boolean> => {
    holdRefusals.current = true;
    if (!scopes.includes('admin')) return false;
    try {
      const session = await probeSession(key);
      storeKey(key, false);
      currentKey.current = key;
      setBoot({ kind: 'ready', session, keyed: true });
      holdRefusals.current = false;
      return true;
    } catch {
      return false;
    }
  };

  const start = async () => {
    try {
      if (!(await keyRequired())) return setBoot({ kind: 'ready', session: await probeSession(null), keyed: false });
      const key = storedKey();
      if (!key) return setBoot({ kind: 'login', notice: null });
      setBoot({ kind: 'ready', session: await probeSession(key), keyed: true });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return signOut('The saved key no longer works; enter another.');
      setBoot({ kind: 'failed', error: error instanceof ApiError ? error : new ApiError(0, 'NETWORK', 'the server cannot be reached; is it running?') });
    }
  };
  useEffect(() => void start(), []);

  if (boot.kind === 'starting') return <Loading label="Connecting to Cairn…" />;
  if (boot.kind === 'failed') return <ErrorNote error={boot.error} retry={() => void start()} />;
  if (boot.kind === 'login') {
    return (
      <LoginPage
        notice={boot.notice}
        onSubmit={async (key, remember) => {
          try {
            const session = await probeSession(key);
            storeKey(key, remember);
            setBoot({ kind: 'ready', session, keyed: true });
            return null;
          } catch (error) {
            return refusal(error);
          }
        }}
      />
    );
  }
  return (
    <SignedIn
      session={boot.session}
      page={route.page}
      params={route.params}
      onSignOut={boot.keyed ? () => signOut() : null}
      onRefused={onRefused}
      firstKey={firstKey}
      signOut={signOut}
    />
  );
};

const allowedPage = (session: Session, page: Page | null): Page => {
  const fallback: Page = session.admin ? 'connectors' : 'memory';
  if (page === null) return fallback;
  if (['connectors', 'keys', 'audit'].includes(page) && !session.admin) return 'memory';
  return page;
};

interface SignedInProps {
  session: Session;
  page: Page | null;
  params: URLSearchParams;
  onSignOut: (() => void) | null;
  onRefused(key: string | null): void;
  firstKey(key: string, scopes: string[]): Promise<boolean>;
  signOut(notice?: string | null): void;
}

const SignedIn = ({ session, page, params, onSignOut, onRefused, firstKey, signOut }: SignedInProps) => {
  const live = useMemo(() => new LiveHub(), []);
  const arrivals = useMemo(() => new Arrivals(live), [live]);
  const api = useMemo(() => createApi(session.key, () => onRefused(session.key)), [session.key]);
  useEffect(() => {
    if (session.read) live.start(api.headers(), () => onRefused(session.key));
    return () => live.close();
  }, [api]);
  const shown = allowedPage(session, page);
  useEffect(() => {
    // From the address as it is now, not as it was at this render: effects run after paint,
    // and a page opened in between (a link, a typed address) must not be sent back.
    const now = currentRoute();
    const allowed = allowedPage(session, now.page);
    if (allowed !== now.page) redirect(allowed, Object.fromEntries(now.params));
  }, [shown, page]);
  if (!session.read && !session.admin) {
    // Signing out is the way back to the key form: a remembered key would otherwise bring the user here again.
    return (
      <div class="write-only">
        <ErrorNote error={new ApiError(403, 'FORBIDDEN', 'This key may only write. The dashboard needs a key with the read or admin scope.')} />
        {onSignOut && (
          <button type="button" class="button" onClick={onSignOut}>
            Sign out
          </button>
        )}
      </div>
    );
  }
  return (
    <AppCtx.Provider value={{ api, session, live, arrivals, firstKey, signOut }}>
      <Shell page={shown} onSignOut={onSignOut}>
        {shown === 'connectors' && <ConnectorsPage />}
        {shown === 'memory' && <MemoryPage params={params} />}
        {shown === 'search' && <SearchPage params={params} />}
        {shown === 'cortex' && <CortexPage />}
        {shown === 'keys' && <KeysPage />}
        {shown === 'audit' && <AuditPage />}
      </Shell>
    </AppCtx.Provider>
  );
};

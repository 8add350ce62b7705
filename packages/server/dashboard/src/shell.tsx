import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { StreamState } from './api/stream.ts';
import { Logo } from './components/logo.tsx';
import { useApp } from './context.ts';
import { type Page, hrefFor, navigate } from './router.ts';

const NAV: Array<{ page: Page; label: string; admin?: boolean }> = [
  { page: 'connectors', label: 'Connectors', admin: true },
  { page: 'memory', label: 'Memory' },
  { page: 'search', label: 'Search' },
  { page: 'cortex', label: 'Cortex' },
  { page: 'keys', label: 'Keys', admin: true },
  { page: 'audit', label: 'Audit', admin: true },
];

const LIVE_LABEL: Record<StreamState, string> = { live: 'Live', connecting: 'Connecting…', retrying: 'Reconnecting…', closed: 'Offline' };

const LiveBadge = () => {
  const { live } = useApp();
  const [state, setState] = useState(live.state);
  useEffect(() => live.onState(setState), [live]);
  return (
    <span class={`live-badge ${state}`} role="status" title="Updates from /api/v1/stream">
      <span class="dot" aria-hidden="true" />
      {LIVE_LABEL[state]}
    </span>
  );
};

/** The search box in the header; "/" focuses it from anywhere. */
const HeaderSearch = () => {
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (event.key === '/' && !['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName)) {
        event.preventDefault();
        input.current?.focus();
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);
  return (
    <form
      class="header-search"
      role="search"
      onSubmit={(event) => {
        event.preventDefault();
        const q = input.current?.value.trim();
        if (q) navigate('search', { q });
      }}
    >
      <input ref={input} type="search" placeholder="Search memory  ( / )" aria-label="Search memory" />
    </form>
  );
};

export const Shell = ({ page, onSignOut, children }: { page: Page; onSignOut: (() => void) | null; children: ComponentChildren }) => {
  const { session } = useApp();
  return (
    <div class="shell">
      {/* Not an #anchor: the hash holds the route. */}
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header class="topbar">
        <a class="brand" href={hrefFor(session.read ? 'memory' : 'connectors')}>
          <Logo />
          Cairn
        </a>
        <nav aria-label="Sections">
          {NAV.filter((n) => !n.admin || session.admin).map((n) => (
            <a href={hrefFor(n.page)} class={n.page === page ? 'active' : ''} aria-current={n.page === page ? 'page' : undefined}>
              {n.label}
            </a>
          ))}
        </nav>
        <div class="topbar-end">
          {/* Remounted when leaving the search page, so an old query does not linger there. */}
          {session.read && <HeaderSearch key={page === 'search' ? 'on-search' : 'elsewhere'} />}
          {session.read && <LiveBadge />}
          {onSignOut && (
            <button type="button" class="button ghost small" onClick={onSignOut}>
              Sign out
            </button>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
};

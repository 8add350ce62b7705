import { useEffect, useState } from 'preact/hooks';
import { ApiError, entryUrl } from '../api/client.ts';
import type { Entry, HistoryResponse } from 'cairn-memory-client';
import { Confidence } from '../components/confidence.tsx';
import { Evidence } from '../components/evidence.tsx';
import { CopyButton } from '../components/copy-button.tsx';
import { JsonView } from '../components/json-view.tsx';
import { PathText } from '../components/path-text.tsx';
import { ErrorNote, Loading } from '../components/states.tsx';
import { Time } from '../components/time.tsx';
import { useApp } from '../context.ts';
import { useLoad } from '../hooks/use-load.ts';
import { addressOf } from './address.ts';
import { HistoryPanel } from './history-panel.tsx';
import type { Arrivals } from './recent.ts';

type Tab = 'value' | 'history' | 'details';
const TABS: Tab[] = ['value', 'history', 'details'];

/** Arrow keys move between tabs, as the ARIA tabs pattern expects. */
const onTabKey = (event: KeyboardEvent, tab: Tab, setTab: (t: Tab) => void): void => {
  const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
  if (step === 0) return;
  const next = TABS[(TABS.indexOf(tab) + step + TABS.length) % TABS.length] as Tab;
  setTab(next);
  document.getElementById(`tab-${next}`)?.focus();
};

/** Versions newest first, each once: pages fetched at different times overlap or leave gaps otherwise. */
const byVersion = (...pages: Entry[][]): Entry[] => {
  const all = new Map<number, Entry>();
  for (const page of pages) for (const v of page) all.set(v.version, v);
  return [...all.values()].sort((a, b) => b.version - a.version);
};

/** One entry: its value, metadata and provenance, and its history with diffs; live. */
export const EntryDetail = ({ path, entryKey, arrivals }: { path: string; entryKey: string; arrivals: Arrivals }) => {
  const { api, live } = useApp();
  const [tab, setTab] = useState<Tab>('value');
  const [shown, setShown] = useState<number | null>(null);
  // Every version fetched so far (versions never change): a refetched first page then only adds.
  const [older, setOlder] = useState<Entry[]>([]);
  // Where "Older versions" continues from once it was used (null: nothing older); undefined: not used yet.
  const [olderNext, setOlderNext] = useState<number | null | undefined>(undefined);
  const [arrived, setArrived] = useState<Set<number>>(new Set());
  const history = useLoad(() => api.get<HistoryResponse>(entryUrl('history', path, entryKey), { limit: 50 }), [api, path, entryKey]);
  const id = addressOf({ entity_path: path, key: entryKey });

  useEffect(() => {
    setShown(null);
    setOlder([]);
    setOlderNext(undefined);
    setArrived(new Set());
    arrivals.seen(id);
  }, [id]);
  useEffect(() => {
    // The streamed version is the version: added as it comes, with no request. Refetching the
    // history page per version cost 600 requests (615 MB) for a burst of 600 writes, and showed
    // none of them while it lasted. A version missed while the stream was down is fetched on
    // reconnect (below). Versions arriving together are added once per animation frame.
    let pending: Entry[] = [];
    let frame: number | null = null;
    const flush = () => {
      frame = null;
      const arrivedNow = pending;
      pending = [];
      setArrived((s) => new Set([...s, ...arrivedNow.map((e) => e.version)]));
      setOlder((o) => byVersion(o, arrivedNow));
      arrivals.seen(id);
    };
    const off = live.onEntry((e) => {
      if (addressOf(e) !== id) return;
      pending.push(e);
      frame ??= requestAnimationFrame(flush);
    });
    return () => {
      off();
      if (frame !== null) cancelAnimationFrame(frame);
    };
  }, [live, id]);
  // The stream keeps no backlog: a version written while it was down is fetched on reconnect.
  useEffect(() => live.onReconnect(() => history.reload(true)), [live, history.reload]);
  // A refetched first page (after a live version) is added to what was fetched, never replaces it:
  // the versions between the new first page and the older pages would be lost otherwise.
  useEffect(() => {
    const page = history.data?.versions;
    if (page) setOlder((o) => byVersion(o, page));
  }, [history.data]);

  if (history.loading && !history.data) return <Loading label="Loading the entry…" />;
  if (history.error) return <ErrorNote error={history.error} retry={() => history.reload()} />;
  const versions = byVersion(older, history.data?.versions ?? []);
  const current = versions[0];
  if (!current) return <ErrorNote error={new ApiError(404, 'NOT_FOUND', 'This entry has no versions.')} />;
  const entry = versions.find((v) => v.version === shown) ?? current;
  const nextBefore = olderNext !== undefined ? olderNext : (history.data?.next_before ?? null);
  const loadOlder = async () => {
    const page = await api.get<HistoryResponse>(entryUrl('history', path, entryKey), { limit: 50, before: nextBefore });
    setOlder((o) => byVersion(o, page.versions));
    setOlderNext(page.next_before);
  };

  return (
    <article class="entry-detail" aria-labelledby="entry-title">
      <header class="pane-head">
        <div>
          <div class="muted small mono">
            <PathText path={path} />
          </div>
          <h2 id="entry-title" class="mono">
            {entryKey}
          </h2>
        </div>
        <CopyButton text={`${path}/${entryKey}`} label="Copy the entry address" />
      </header>
      <div class="entry-summary">
        <span class="pill">v{current.version}</span>
        {current.deleted && <span class="pill danger">deleted</span>}
        <Confidence value={current.confidence} />
        <Evidence evidence={current.evidence} />
        <span>{current.event_type ?? current.memory_type}</span>
        <span class="muted">
          by {current.agent_id} · <Time iso={current.written_at} />
        </span>
      </div>
      {Object.keys(current.provenance).length > 0 && (
        <div class="provenance" aria-label="Provenance">
          {Object.entries(current.provenance).map(([k, v]) => (
            <span class="chip">
              {k}: <b>{typeof v === 'string' ? v : JSON.stringify(v)}</b>
            </span>
          ))}
        </div>
      )}
      <div class="tabs" role="tablist" aria-label="Entry views" onKeyDown={(e) => onTabKey(e, tab, setTab)}>
        {TABS.map((t) => (
          <button type="button" role="tab" id={`tab-${t}`} aria-selected={tab === t} tabIndex={tab === t ? 0 : -1} class={tab === t ? 'active' : ''} onClick={() => setTab(t)}>
            {t === 'value' ? 'Value' : t === 'history' ? `History (${versions.length}${nextBefore ? '+' : ''})` : 'Details'}
          </button>
        ))}
      </div>
      <div role="tabpanel" class="tab-body" aria-labelledby={`tab-${tab}`}>
        {tab === 'value' && (
          <>
            {entry !== current && (
              <p class="notice small">
                Showing v{entry.version} of {current.version}.{' '}
                <button type="button" class="link" onClick={() => setShown(null)}>
                  Back to the current version
                </button>
              </p>
            )}
            {entry.deleted ? <p class="muted">This version is a tombstone: the entry was deleted. Its history is kept.</p> : <JsonView value={entry.value} label={`Value of ${entryKey} v${entry.version}`} />}
          </>
        )}
        {tab === 'history' && (
          <HistoryPanel
            versions={versions}
            arrived={arrived}
            more={nextBefore ? () => void loadOlder() : null}
            onView={(v) => {
              setShown(v);
              setTab('value');
            }}
          />
        )}
        {tab === 'details' && <Details entry={entry} />}
      </div>
    </article>
  );
};

const Details = ({ entry }: { entry: Entry }) => (
  <div>
    <dl class="details">
      <dt>namespace</dt>
      <dd>{entry.namespace}</dd>
      <dt>memory type</dt>
      <dd>{entry.memory_type}</dd>
      <dt>shared</dt>
      <dd>{entry.shared ? 'yes' : 'no'}</dd>
      <dt>tags</dt>
      <dd>{entry.tags.length ? entry.tags.join(', ') : '—'}</dd>
      <dt>created</dt>
      <dd>
        <Time iso={entry.created_at} />
      </dd>
      <dt>written</dt>
      <dd>
        <Time iso={entry.written_at} />
      </dd>
      <dt>expires</dt>
      <dd>
        <Time iso={entry.expires_at} fallback="never" />
      </dd>
      <dt>content hash</dt>
      <dd class="mono small">{entry.content_hash}</dd>
    </dl>
    <h3>Provenance</h3>
    <JsonView value={entry.provenance} label="Provenance" />
  </div>
);

import type { Entry } from 'cairn-memory-client';
import { Confidence } from '../components/confidence.tsx';
import { PathText } from '../components/path-text.tsx';
import { Time } from '../components/time.tsx';
import { useApp } from '../context.ts';
import { hrefFor } from '../router.ts';
import { addressOf, preview } from './address.ts';
import type { Arrivals } from './recent.ts';
import type { TreeNode } from './tree.ts';

interface Props {
  path: string;
  node: TreeNode | null;
  entries: Entry[];
  selectedKey: string | null;
  arrivals: Arrivals;
}

/** The entries at a path (newest first), its sub-paths, and what arrived live, marked. */
export const EntryList = ({ path, node, entries, selectedKey, arrivals }: Props) => {
  const { session } = useApp();
  return (
    <section class="entry-list" aria-labelledby="entry-list-title">
      <header class="pane-head">
        <h2 id="entry-list-title" class="path-title">
          {path ? <PathText path={path} /> : 'Recent writes'}
        </h2>
        <span class="muted small">{path ? `${entries.length} ${entries.length === 1 ? 'entry' : 'entries'} here` : 'across every path, newest first'}</span>
      </header>
      {node && node.children.length > 0 && path && (
        <div class="subpaths" aria-label="Sub-paths">
          {node.children.map((c) => (
            <a class="chip" href={hrefFor('memory', { path: c.path })}>
              {c.name}/ <span class="count">{c.total}</span>
            </a>
          ))}
        </div>
      )}
      {entries.length === 0 && path && (node?.children.length ?? 0) > 0 && <p class="muted small pad">No entries at this exact path; open a sub-path above.</p>}
      <ul class="rows" aria-live="polite">
        {entries.map((e) => {
          const arrival = arrivals.get(addressOf(e));
          return (
            <li key={addressOf(e)} class={`${arrival ? 'fresh' : ''} ${e.key === selectedKey && e.entity_path === path ? 'selected' : ''}`} data-key={e.key}>
              <a href={hrefFor('memory', { path: e.entity_path, key: e.key })}>
                <span class="row-main">
                  <span class="key">{e.key}</span>
                  {arrival && <span class={`badge ${arrival.kind}`}>{arrival.kind === 'new' ? 'new' : `v${e.version}`}</span>}
                  {!path && (
                    <span class="muted small path-hint">
                      <PathText path={e.entity_path} />
                    </span>
                  )}
                </span>
                <span class="row-preview">{preview(e)}</span>
                <span class="row-meta">
                  <span title="version">v{e.version}</span>
                  <Confidence value={e.confidence} />
                  <span class="agent">{e.agent_id}</span>
                  <Time iso={e.written_at} />
                </span>
              </a>
            </li>
          );
        })}
      </ul>
      {entries.length === 0 && !path && (
        <div class="state empty">
          <strong>No memory yet</strong>
          <div class="muted">
            {session.admin ? (
              <>
                Enable a connector on the <a href={hrefFor('connectors')}>Connectors</a> page and point a provider at it, or write an entry:
              </>
            ) : (
              'Entries appear here as agents and connectors write them. Write one:'
            )}
            <pre class="snippet">{`curl -X POST ${location.origin}/api/v1/entries \\
  -H 'content-type: application/json' -H 'X-Cairn-API-Key: <key>' \\
  -d '{"entity_path":"repos/acme/api","key":"note","value":"hello"}'`}</pre>
          </div>
        </div>
      )}
    </section>
  );
};

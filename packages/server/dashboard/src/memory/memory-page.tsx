import { useEffect, useMemo, useState } from 'preact/hooks';
import { ErrorNote, Loading } from '../components/states.tsx';
import { useApp } from '../context.ts';
import { isUnder } from './address.ts';
import { EntryDetail } from './entry-detail.tsx';
import { EntryList } from './entry-list.tsx';
import { PathTree } from './path-tree.tsx';
import { buildTree, findNode } from './tree.ts';
import { useEntries } from './use-entries.ts';

const RECENT = 50;

/** Newest first. ISO times compare as text; localeCompare, far slower, stalled big stores. */
const newestFirst = (a: { written_at: string }, b: { written_at: string }): number => (a.written_at < b.written_at ? 1 : a.written_at > b.written_at ? -1 : 0);

/** Memory: the path tree, the entries at a path, one entry in detail — all live. */
export const MemoryPage = ({ params }: { params: URLSearchParams }) => {
  const { arrivals } = useApp();
  const path = params.get('path') ?? '';
  const key = params.get('key');
  const state = useEntries(path);
  // Re-render when arrivals are marked or seen.
  const [, setTick] = useState(0);
  // Once per animation frame at most, like the entries (use-entries.ts): a burst of writes marks many.
  useEffect(() => {
    let frame: number | null = null;
    const off = arrivals.subscribe(() => {
      frame ??= requestAnimationFrame(() => {
        frame = null;
        setTick((n) => n + 1);
      });
    });
    return () => {
      off();
      if (frame !== null) cancelAnimationFrame(frame);
    };
  }, [arrivals]);

  const all = [...state.entries.values()];
  const tree = useMemo(() => buildTree(all.map((e) => e.entity_path)), [state.entries]);
  const node = findNode(tree, path);
  const shown = path
    ? all.filter((e) => e.entity_path === path).sort(newestFirst)
    : all.sort(newestFirst).slice(0, RECENT);
  // Counted once per render, not once per tree node (a thousand nodes, hundreds of arrivals).
  const unseen = arrivals.countsByPath();
  const partial = [...state.truncated].some((t) => isUnder(path, t) || t === '');

  return (
    <section class="page memory" aria-label="Memory">
      <aside class="pane tree-pane">
        {state.loading && state.entries.size === 0 ? <Loading /> : <PathTree root={tree} selected={path} unseen={(p) => unseen.get(p) ?? 0} />}
        {partial && <p class="muted small pad">The tree shows the first 5,000 entries (fewer when they are large); open a path to list more of it.</p>}
      </aside>
      <div class="pane list-pane">
        {state.error && <ErrorNote error={state.error} retry={state.reload} />}
        {!state.error && (state.loading && state.entries.size === 0 ? <Loading label="Listing entries…" /> : <EntryList path={path} node={node} entries={shown} selectedKey={key} arrivals={arrivals} />)}
      </div>
      <div class="pane detail-pane">
        {key ? (
          <EntryDetail key={`${path}\u0000${key}`} path={path} entryKey={key} arrivals={arrivals} />
        ) : (
          <div class="state empty">
            <strong>Pick an entry</strong>
            <div class="muted">Its value, confidence, provenance and every version with diffs show here. New entries and versions arrive live, marked “new”.</div>
          </div>
        )}
      </div>
    </section>
  );
};

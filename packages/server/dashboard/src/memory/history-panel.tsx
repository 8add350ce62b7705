import { useState } from 'preact/hooks';
import type { Entry } from 'cairn-memory-client';
import { Confidence } from '../components/confidence.tsx';
import { DiffView } from '../components/diff-view.tsx';
import { Time } from '../components/time.tsx';

interface Props {
  versions: Entry[];
  /** Versions that arrived over the stream while this entry was open. */
  arrived: Set<number>;
  onView(version: number): void;
  more: (() => void) | null;
}

const META: Array<keyof Entry> = ['confidence', 'agent_id', 'event_type', 'memory_type', 'tags', 'deleted', 'expires_at'];

const metaChanges = (a: Entry, b: Entry) =>
  META.filter((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f])).map((f) => ({ field: f, from: JSON.stringify(a[f]), to: JSON.stringify(b[f]) }));

/** Every version, newest first, with a diff between any two. */
export const HistoryPanel = ({ versions, arrived, onView, more }: Props) => {
  const [compare, setCompare] = useState<{ from: number; to: number } | null>(null);
  const byVersion = new Map(versions.map((v) => [v.version, v]));
  const from = compare && byVersion.get(compare.from);
  const to = compare && byVersion.get(compare.to);

  return (
    <div class="history">
      <ol class="versions">
        {versions.map((v, i) => {
          const previous = versions[i + 1];
          return (
            <li key={v.version} class={arrived.has(v.version) ? 'fresh' : ''} data-version={v.version}>
              <div class="version-head">
                <strong>v{v.version}</strong>
                {arrived.has(v.version) && <span class="badge version">new</span>}
                {v.deleted && <span class="pill danger">deleted</span>}
                <span class="event">{v.event_type ?? v.memory_type}</span>
                <Confidence value={v.confidence} />
              </div>
              <div class="muted small">
                {v.agent_id} · <Time iso={v.written_at} />
              </div>
              <div class="actions">
                <button type="button" class="button small ghost" onClick={() => onView(v.version)}>
                  View
                </button>
                {previous && (
                  <button type="button" class="button small" onClick={() => setCompare({ from: previous.version, to: v.version })} aria-label={`Compare v${previous.version} with v${v.version}`}>
                    Diff v{previous.version} → v{v.version}
                  </button>
                )}
              </div>
            </li>
          );
        })}
      </ol>
      {more && (
        <button type="button" class="button small ghost" onClick={more}>
          Older versions
        </button>
      )}
      {compare && (
        <section class="diff-panel" aria-label="Version diff">
          <header class="diff-head">
            <label>
              from
              <select value={compare.from} onChange={(e) => setCompare({ ...compare, from: Number(e.currentTarget.value) })}>
                {versions.map((v) => (
                  <option value={v.version}>v{v.version}</option>
                ))}
              </select>
            </label>
            <label>
              to
              <select value={compare.to} onChange={(e) => setCompare({ ...compare, to: Number(e.currentTarget.value) })}>
                {versions.map((v) => (
                  <option value={v.version}>v{v.version}</option>
                ))}
              </select>
            </label>
            <button type="button" class="button small ghost" onClick={() => setCompare(null)} aria-label="Close the diff">
              Close
            </button>
          </header>
          {from && to && (
            <>
              {metaChanges(from, to).length > 0 && (
                <table class="meta-changes">
                  <tbody>
                    {metaChanges(from, to).map((c) => (
                      <tr>
                        <th scope="row">{c.field}</th>
                        <td class="d-del">{c.from}</td>
                        <td class="d-add">{c.to}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              <DiffView before={from.value} after={to.value} label={`Diff of v${from.version} and v${to.version}`} />
            </>
          )}
        </section>
      )}
    </div>
  );
};

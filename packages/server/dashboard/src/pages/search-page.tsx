import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Highlight, SearchMode, SearchResponse, SearchResult } from 'cairn-memory-client';
import { Confidence } from '../components/confidence.tsx';
import { Evidence } from '../components/evidence.tsx';
import { Empty, ErrorNote, Loading } from '../components/states.tsx';
import { Time } from '../components/time.tsx';
import { useApp } from '../context.ts';
import { useLoad } from '../hooks/use-load.ts';
import { hrefFor, navigate } from '../router.ts';

const MODES: Array<[SearchMode, string]> = [
  ['hybrid', 'Hybrid'],
  ['text', 'Words'],
  ['vector', 'Meaning'],
];

/** A fragment with its matching words wrapped in <mark> (offsets from the server). */
const marked = (h: Highlight): Array<string | JSX.Element> => {
  const out: Array<string | JSX.Element> = [];
  let at = 0;
  for (const [start, end] of [...h.matches].sort((a, b) => a[0] - b[0])) {
    if (start < at) continue;
    out.push(h.fragment.slice(at, start), <mark>{h.fragment.slice(start, end)}</mark>);
    at = end;
  }
  out.push(h.fragment.slice(at));
  return out;
};

const why = (r: SearchResult): string =>
  [r.parts.text && `words #${r.parts.text.rank}`, r.parts.vector && `meaning #${r.parts.vector.rank}`].filter(Boolean).join(' · ') || 'recency and confidence';

export const SearchPage = ({ params }: { params: URLSearchParams }) => {
  const { api } = useApp();
  const q = params.get('q') ?? '';
  const mode = (params.get('mode') as SearchMode | null) ?? 'hybrid';
  const path = params.get('path') ?? '';
  const [text, setText] = useState(q);
  const [scope, setScope] = useState(path);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => setText(q), [q]);
  useEffect(() => input.current?.focus(), []);

  const results = useLoad(
    () => (q ? api.send<SearchResponse>('POST', '/api/v1/search', { query: q, mode, limit: 25, ...(path ? { entity_path: path } : {}) }) : Promise.resolve(null)),
    [api, q, mode, path],
  );
  const go = (next: { q?: string; mode?: SearchMode; path?: string }) => navigate('search', { q: next.q ?? q, mode: (next.mode ?? mode) === 'hybrid' ? undefined : (next.mode ?? mode), path: next.path ?? path });

  return (
    <section class="page narrow" aria-labelledby="search-title">
      <header class="page-head">
        <h1 id="search-title">Search</h1>
        <p class="muted">Finds entries by their words and by meaning; the matching words are highlighted.</p>
      </header>
      <form
        class="search-form card"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          go({ q: text.trim(), path: scope.trim() });
        }}
      >
        <input ref={input} type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="e.g. retry storm in checkout" aria-label="Search query" />
        <input class="scope" value={scope} onInput={(e) => setScope(e.currentTarget.value)} placeholder="under path (optional)" aria-label="Only under this entity path" />
        <div class="segmented" role="group" aria-label="Ranking">
          {MODES.map(([m, label]) => (
            <button type="button" aria-pressed={m === mode} class={m === mode ? 'active' : ''} onClick={() => go({ mode: m, q: text.trim() })}>
              {label}
            </button>
          ))}
        </div>
        <button class="button primary" type="submit">
          Search
        </button>
      </form>

      {!q && <Empty title="Search your agents' memory">Type words from a title, a key or a value — or describe what you are after; hybrid ranking finds both. Press “/” anywhere to jump here.</Empty>}
      {q && results.loading && <Loading label="Searching…" />}
      {results.error && <ErrorNote error={results.error} retry={() => results.reload()} />}
      {q && results.data && results.data.results.length === 0 && (
        <Empty title={`Nothing matches “${q}”`}>Try fewer or other words, switch to Meaning, or search without the path filter.</Empty>
      )}
      {q && results.data && results.data.results.length > 0 && (
        <>
          <p class="muted small">
            {results.data.results.length} results · ranked by {results.data.mode}
          </p>
          <ol class="results">
            {results.data.results.map((r) => (
              <li class="card result">
                <a class="result-title" href={hrefFor('memory', { path: r.entry.entity_path, key: r.entry.key })}>
                  <span class="muted">{r.entry.entity_path}/</span>
                  <strong>{r.entry.key}</strong>
                </a>
                <div class="row-meta">
                  <span title="score">score {r.score.toFixed(3)}</span>
                  <span class="muted">{why(r)}</span>
                  <Confidence value={r.entry.confidence} />
                  <Evidence evidence={r.entry.evidence} />
                  <span>v{r.entry.version}</span>
                  <Time iso={r.entry.written_at} />
                </div>
                {r.highlights.length > 0 && (
                  <ul class="highlights">
                    {r.highlights.map((h) => (
                      <li>
                        <span class="field">{h.field}</span> {marked(h)}
                      </li>
                    ))}
                  </ul>
                )}
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
};

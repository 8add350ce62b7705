import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.ts';
import type { AuditPage as AuditAnswer } from 'cairn-memory-client';
import { Empty, ErrorNote, Loading } from '../components/states.tsx';
import { Time } from '../components/time.tsx';
import { useApp } from '../context.ts';
import { useLoad } from '../hooks/use-load.ts';

const describe = (value: unknown): string =>
  value && typeof value === 'object'
    ? Object.entries(value)
        .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' · ')
    : '';

/** The audit log, newest first, filtered by action family and writer. */
export const AuditPage = () => {
  const { api } = useApp();
  const [filter, setFilter] = useState({ action: '', agent_id: '' });
  const [draft, setDraft] = useState(filter);
  const [more, setMore] = useState<AuditAnswer | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const first = useLoad(() => api.get<AuditAnswer>('/api/v1/admin/audit', { ...filter, limit: 100 }), [api, filter]);
  const events = [...(first.data?.events ?? []), ...(more?.events ?? [])];
  const cursor = more ? more.next_cursor : (first.data?.next_cursor ?? null);
  const loadMore = async () => {
    try {
      const page = await api.get<AuditAnswer>('/api/v1/admin/audit', { ...filter, limit: 100, cursor });
      setMore((m) => ({ events: [...(m?.events ?? []), ...page.events], next_cursor: page.next_cursor }));
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'ERROR', String(e)));
    }
  };
  return (
    <section class="page" aria-labelledby="audit-title">
      <header class="page-head">
        <h1 id="audit-title">Audit log</h1>
        <p class="muted">Who changed what: writes, keys, teams and connectors.</p>
      </header>
      <form
        class="filters card"
        onSubmit={(e) => {
          e.preventDefault();
          setMore(null);
          setFilter(draft);
        }}
      >
        <label>
          Action
          <input value={draft.action} placeholder="key.  or  connector.enabled" onInput={(e) => setDraft({ ...draft, action: e.currentTarget.value.trim() })} />
        </label>
        <label>
          Agent
          <input value={draft.agent_id} placeholder="external/github" onInput={(e) => setDraft({ ...draft, agent_id: e.currentTarget.value.trim() })} />
        </label>
        <button class="button" type="submit">
          Filter
        </button>
      </form>
      {first.loading && !first.data && <Loading />}
      {first.error && <ErrorNote error={first.error} retry={() => first.reload()} />}
      {error && <ErrorNote error={error} />}
      {first.data && events.length === 0 && !cursor && <Empty title="No audit events match">Clear the filters, or make a change (enable a connector, issue a key) and it appears here.</Empty>}
      {/* A filtered read scans a bounded stretch of the log: none there is not none at all. */}
      {first.data && events.length === 0 && cursor && <Empty title="None among the newest events">Older events may match: look further back.</Empty>}
      {events.length > 0 && (
        <table class="table card">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">By</th>
              <th scope="col">Target</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr data-action={e.action}>
                <td class="nowrap">
                  <Time iso={e.at} />
                </td>
                <td>
                  <code>{e.action}</code>
                </td>
                <td class="nowrap">
                  {e.actor.agent_id}
                  <div class="muted small">key {e.actor.key_id ?? 'none (open mode)'}</div>
                </td>
                <td class="mono small">{describe(e.target)}</td>
                <td class="small">{describe(e.changes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor && (
        <button class="button ghost" type="button" onClick={() => void loadMore()}>
          Older events
        </button>
      )}
    </section>
  );
};

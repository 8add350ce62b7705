import { useEffect, useState } from 'preact/hooks';
import { openStream } from '../api/stream.ts';
import type { CortexStatus, Digest, DigestList, DigestType, Pattern, Trace } from 'cairn-memory-client';
import { Empty, ErrorNote, Loading } from '../components/states.tsx';
import { Time } from '../components/time.tsx';
import { useApp } from '../context.ts';
import { useInterval, useLoad } from '../hooks/use-load.ts';
import { hrefFor } from '../router.ts';
import { FactsView } from './facts-view.tsx';

/** Every digest type, for the filter; a type the client adds is a compile error here until it is listed. */
const TYPES: Record<DigestType, true> = { incidents: true, repos: true, comms: true, projects: true, generic: true, source: true, namespace: true };
const TYPE_CHOICES = ['', ...Object.keys(TYPES)];

const STATUS_TEXT: Record<CortexStatus['status'], string> = {
  active: 'Active: compiling digests as memory changes.',
  standby: 'Standby: another worker holds the lock; this one takes over if it stops.',
  stopped: 'Stopped: no worker is running. Start one with `cairn serve --with-cortex` (filesystem) or `cairn cortex` (PostgreSQL, S3).',
};

const StatusCard = ({ status }: { status: CortexStatus }) => (
  <section class="card status-card" aria-labelledby="cortex-status">
    <header class="connector-head">
      <h2 id="cortex-status">Status</h2>
      <span class={`pill ${status.status === 'active' ? 'ok' : status.status === 'standby' ? 'warn' : 'danger'}`} data-status={status.status}>
        {status.status}
      </span>
    </header>
    <p class="muted small">{STATUS_TEXT[status.status]}</p>
    {status.failing && (
      <p class="failing small" role="alert" data-failing-since={status.failing.since}>
        Failing since <Time iso={status.failing.since} fallback="unknown" /> ({status.failing.attempts} attempts, retried with a growing delay)
        {status.failing.error !== undefined && <span class="mono">: {status.failing.error}</span>}
      </p>
    )}
    <dl class="counters">
      {status.digests !== null && (
        <div>
          <dt>digests</dt>
          <dd>{status.digests}</dd>
        </div>
      )}
      {status.queue_depth !== null && (
        <div>
          <dt>queue</dt>
          <dd>{status.queue_depth}</dd>
        </div>
      )}
      <div>
        <dt>lag</dt>
        <dd>{status.lag_ms < 1000 ? `${status.lag_ms} ms` : `${(status.lag_ms / 1000).toFixed(1)} s`}</dd>
      </div>
      <div class="wide">
        <dt>heartbeat</dt>
        <dd>
          <Time iso={status.heartbeat_at} fallback="none" />
        </dd>
      </div>
      <div class="wide">
        <dt>last compiled</dt>
        <dd>
          <Time iso={status.last_compiled_at} fallback="never" />
        </dd>
      </div>
    </dl>
    {status.worker_id && <p class="muted small mono">worker {status.worker_id}</p>}
  </section>
);

const DigestCard = ({ digest }: { digest: Digest }) => (
  <article class="card digest" data-scope={digest.scope}>
    <header>
      <span class="pill">{digest.type}</span>
      {digest.entity_path ? (
        <a class="mono" href={hrefFor('memory', { path: digest.entity_path })}>
          {digest.entity_path}
        </a>
      ) : (
        <span class="mono">{digest.scope}</span>
      )}
      <span class="muted small">
        v{digest.version} · <Time iso={digest.compiled_at} />
      </span>
    </header>
    <p class="headline">{digest.headline}</p>
    <details>
      <summary>Facts{digest.open_items.length > 0 ? ` · ${digest.open_items.length} open ${digest.open_items.length === 1 ? 'item' : 'items'}` : ''}</summary>
      <FactsView facts={digest.facts} />
      {digest.open_items.length > 0 && (
        <ul class="open-items">
          {digest.open_items.map((item) => (
            <li>
              <a href={hrefFor('memory', { path: String(item.entity_path), key: String(item.key) })}>{String(item.title ?? item.key)}</a> <span class="muted small">{String(item.status ?? '')}</span>
            </li>
          ))}
        </ul>
      )}
    </details>
  </article>
);

export const CortexPage = () => {
  const { api } = useApp();
  const [type, setType] = useState('');
  const status = useLoad(() => api.get<CortexStatus>('/api/v1/cortex/status'), [api]);
  const digests = useLoad(() => api.get<DigestList>('/api/v1/cortex/digests', { type: type || undefined, limit: 100 }), [api, type]);
  const patterns = useLoad(() => api.get<{ patterns: Pattern[] }>('/api/v1/patterns'), [api]);
  const traces = useLoad(() => api.get<{ traces: Trace[] }>('/api/v1/traces'), [api]);
  useInterval(() => status.reload(true), 5000);

  // Each compiled digest, pattern and trace arrives on the Cortex stream: refresh what changed.
  // The stream keeps no backlog: after a reconnect, whatever was compiled meanwhile is fetched.
  useEffect(() => {
    let wasLive = false;
    return openStream('/api/v1/cortex/stream', api.headers(), {
      onEvent: (event) => {
        if (event === 'digest' || event === 'digest_removed') digests.reload(true);
        if (event === 'pattern' || event === 'pattern_removed') patterns.reload(true);
        if (event === 'trace') traces.reload(true);
        status.reload(true);
      },
      onState: (state) => {
        if (state !== 'live') return;
        if (wasLive) {
          digests.reload(true);
          patterns.reload(true);
          traces.reload(true);
          status.reload(true);
        }
        wasLive = true;
      },
      onUnauthenticated: () => {},
    });
  }, [api, digests.reload]);

  return (
    <section class="page" aria-labelledby="cortex-title">
      <header class="page-head">
        <h1 id="cortex-title">Cortex</h1>
        <p class="muted">Digests compiled from memory, recurring patterns, and decision traces linking causes to effects.</p>
      </header>
      <div class="cortex-grid">
        <div class="cortex-side">
          {status.loading && !status.data && <Loading />}
          {status.error && <ErrorNote error={status.error} retry={() => status.reload()} />}
          {status.data && <StatusCard status={status.data} />}
          <section class="card" aria-labelledby="patterns-title">
            <h2 id="patterns-title">Patterns</h2>
            {patterns.error && <ErrorNote error={patterns.error} retry={() => patterns.reload()} />}
            {patterns.data?.patterns.length === 0 && <p class="muted small">None detected. Recurring incidents on a service, flapping deploys and contested keys show here.</p>}
            <ul class="plain">
              {patterns.data?.patterns.map((p) => (
                <li class="pattern">
                  <span class="pill warn">{p.kind.replace(/_/g, ' ')}</span> {p.title}
                  <div class="muted small">
                    <a href={hrefFor('memory', { path: p.entity_path })}>{p.entity_path}</a> · {p.evidence.length} entries · <Time iso={p.detected_at} />
                  </div>
                </li>
              ))}
            </ul>
          </section>
          <section class="card" aria-labelledby="traces-title">
            <h2 id="traces-title">Decision traces</h2>
            {traces.error && <ErrorNote error={traces.error} retry={() => traces.reload()} />}
            {traces.data?.traces.length === 0 && <p class="muted small">None yet. A failed deploy followed by an incident on the same service is linked here, step by step.</p>}
            {traces.data?.traces.map((t) => (
              <details class="trace">
                <summary>{t.title}</summary>
                <p class="small">{t.reason}</p>
                <ol class="chain">
                  {t.chain.map((link) => (
                    <li>
                      <span class="pill">{link.role}</span> <a href={hrefFor('memory', { path: link.entity_path, key: link.key })}>{link.summary}</a>
                      <div class="muted small">
                        {link.event} · <Time iso={link.at} />
                      </div>
                    </li>
                  ))}
                </ol>
              </details>
            ))}
          </section>
        </div>
        <section aria-labelledby="digests-title">
          <header class="section-head">
            <h2 id="digests-title">Digests</h2>
            <label class="small">
              Type{' '}
              <select value={type} onChange={(e) => setType(e.currentTarget.value)}>
                {TYPE_CHOICES.map((t) => (
                  <option value={t}>{t || 'all'}</option>
                ))}
              </select>
            </label>
          </header>
          {digests.loading && !digests.data && <Loading />}
          {digests.error && <ErrorNote error={digests.error} retry={() => digests.reload()} />}
          {digests.data?.digests.length === 0 && (
            <Empty title="No digests yet">{status.data?.status === 'stopped' ? 'No Cortex worker is running; start one (see Status).' : 'They are compiled a few seconds after entries are written.'}</Empty>
          )}
          <div class="digests">
            {digests.data?.digests.map((d) => (
              <DigestCard digest={d} />
            ))}
          </div>
        </section>
      </div>
    </section>
  );
};

import { useEffect, useState } from 'preact/hooks';
import type { Connector } from 'cairn-memory-client';
import { ErrorNote, Loading } from '../components/states.tsx';
import { useApp } from '../context.ts';
import { useInterval, useLoad } from '../hooks/use-load.ts';
import { ConnectorCard } from './connector-card.tsx';

/** The four connectors; counters refresh on every webhook-written entry and every 10 s. */
export const ConnectorsPage = () => {
  const { api, live } = useApp();
  const list = useLoad(() => api.get<{ connectors: Connector[] }>('/api/v1/connectors'), [api]);
  // Secrets are shown once: kept here (not refetched) until the user leaves the page.
  const [secrets, setSecrets] = useState<Record<string, string>>({});

  useInterval(() => list.reload(true), 10_000);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = live.onEntry((entry) => {
      if (!entry.agent_id.startsWith('external/')) return;
      // Counters are flushed to shared storage about once a second: ask a little later.
      clearTimeout(timer);
      timer = setTimeout(() => list.reload(true), 1200);
    });
    return () => {
      off();
      clearTimeout(timer);
    };
  }, [live, list.reload]);

  return (
    <section class="page" aria-labelledby="connectors-title">
      <header class="page-head">
        <h1 id="connectors-title">Connectors</h1>
        <p class="muted">Turn a provider on, paste its webhook URL and signing secret into the provider, and its events become memory entries.</p>
      </header>
      {list.loading && !list.data && <Loading />}
      {list.error && <ErrorNote error={list.error} retry={() => list.reload()} />}
      {list.data && (
        <div class="connector-grid">
          {list.data.connectors.map((c) => (
            <ConnectorCard
              key={c.name}
              connector={c}
              secret={secrets[c.name] ?? null}
              onSecret={(secret) => setSecrets((s) => ({ ...s, [c.name]: secret }))}
              onChanged={() => list.reload(true)}
            />
          ))}
        </div>
      )}
    </section>
  );
};

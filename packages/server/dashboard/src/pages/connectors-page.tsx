import { useEffect, useState } from 'preact/hooks';
import type { Connector, ConnectorChange } from 'cairn-memory-client';
import { ErrorNote, Loading } from '../components/states.tsx';
import { useApp } from '../context.ts';
import { useInterval, useLoad } from '../hooks/use-load.ts';
import { ConnectorCard } from './connector-card.tsx';

/** A signing secret as issued, with the connector's times it was issued under. */
interface Issued {
  secret: string;
  enabled_at: string | null;
  rotated_at: string | null;
}

/**
 * Whether the listing still describes the connector a secret was issued for: on, and neither
 * enabled again nor rotated since (here or by anyone else, through the API or another tab).
 */
const stillInUse = (issued: Issued, c: Connector | undefined): boolean =>
  c !== undefined && c.enabled && c.managed_by === 'api' && c.enabled_at === issued.enabled_at && c.rotated_at === issued.rotated_at;

/** The four connectors; counters refresh on every webhook-written entry and every 10 s. */
export const ConnectorsPage = () => {
  const { api, live } = useApp();
  const list = useLoad(() => api.get<{ connectors: Connector[] }>('/api/v1/connectors'), [api]);
  // Secrets are shown once: kept here (not refetched) while the listing shows the connector as
  // it was when the secret was issued; a rotation, a disable or a re-enable elsewhere drops it,
  // rather than leave a secret on screen that no longer verifies.
  const [secrets, setSecrets] = useState<Record<string, Issued>>({});
  const connectors = list.data?.connectors;
  useEffect(() => {
    if (!connectors) return;
    setSecrets((kept) => {
      const left = Object.entries(kept).filter(([name, issued]) => stillInUse(issued, connectors.find((c) => c.name === name)));
      return left.length === Object.keys(kept).length ? kept : Object.fromEntries(left);
    });
  }, [connectors]);

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
              secret={secrets[c.name] && stillInUse(secrets[c.name]!, c) ? secrets[c.name]!.secret : null}
              onSecret={(answer: ConnectorChange & { signing_secret: string }) =>
                setSecrets((s) => ({ ...s, [c.name]: { secret: answer.signing_secret, enabled_at: answer.enabled_at ?? null, rotated_at: answer.rotated_at ?? null } }))
              }
              onChanged={() => list.reload(true)}
            />
          ))}
        </div>
      )}
    </section>
  );
};

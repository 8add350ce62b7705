import { useEffect, useState } from 'preact/hooks';
import type { DeliveryLine, DeliveryLog } from 'cairn-memory-client';
import { Time } from '../components/time.tsx';
import { useApp } from '../context.ts';
import { useInterval, useLoad } from '../hooks/use-load.ts';

/** How often an open log is re-read: refused deliveries write no entry, so no stream announces them. */
const POLL_MS = 5000;
/** Lines shown before "show all". */
const FIRST = 8;

const PILL: Record<DeliveryLine['outcome'], string> = { written: 'ok', unchanged: '', duplicate: '', ignored: 'warn', rejected: 'danger' };

/**
 * A connector's recent deliveries, as providers show theirs: when, which event, its delivery
 * id, what became of it and why. Live by polling GET …/deliveries while the section is open
 * and the tab visible, and at once when the card's received counter moves: the entry stream
 * the page follows carries written deliveries only, and a person setting up a webhook is
 * looking for the refused ones.
 */
export const ConnectorDeliveries = ({ name, received }: { name: string; received: number }) => {
  const { api } = useApp();
  const [open, setOpen] = useState(true);
  const [all, setAll] = useState(false);
  const log = useLoad(() => api.get<DeliveryLog>(`/api/v1/connectors/${name}/deliveries`), [api, name]);
  useInterval(() => open && log.reload(true), POLL_MS);
  useEffect(() => log.reload(true), [received]);
  const lines = log.data?.deliveries ?? [];
  const shown = all ? lines : lines.slice(0, FIRST);
  return (
    <details class="deliveries" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Recent deliveries{lines.length > 0 ? ` (${lines.length})` : ''}</summary>
      {lines.length === 0 ? (
        <p class="muted small">{log.error ? log.error.message : 'None yet: send a test delivery from the provider.'}</p>
      ) : (
        <div class="deliveries-scroll">
          <table class="table small" aria-label={`Recent ${name} deliveries`}>
            <thead>
              <tr>
                <th>When</th>
                <th>Event</th>
                <th>Outcome</th>
                <th>Why</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((d) => (
                <tr key={d.seq} data-delivery-outcome={d.outcome}>
                  <td class="nowrap">
                    <Time iso={d.at} />
                  </td>
                  <td>
                    <code>{d.event ?? '—'}</code>
                    {d.delivery_id && <div class="muted small" title="Delivery id">{d.delivery_id}</div>}
                  </td>
                  <td class="nowrap">
                    <span class={`pill ${PILL[d.outcome]}`}>{d.outcome}</span> <span class="muted small">{d.status}</span>
                  </td>
                  <td class="reason">{d.reason ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {lines.length > FIRST && (
            <button class="button ghost small" type="button" onClick={() => setAll(!all)}>
              {all ? 'Show fewer' : `Show all ${lines.length}`}
            </button>
          )}
        </div>
      )}
    </details>
  );
};

import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.ts';
import type { Connector, ConnectorChange } from 'cairn-memory-client';
import { CopyButton } from '../components/copy-button.tsx';
import { Time } from '../components/time.tsx';
import { useApp } from '../context.ts';
import { ConnectorDeliveries } from './connector-deliveries.tsx';
import { ConnectorSettings } from './connector-settings.tsx';

interface Props {
  connector: Connector;
  secret: string | null;
  /** A secret just issued, with the enabled_at / rotated_at it is in use under. */
  onSecret(answer: ConnectorChange & { signing_secret: string }): void;
  onChanged(): void;
}

/** The URL as shown: a key in it is masked on screen (the copy button copies it whole). */
const maskedUrl = (url: string): string => url.replace(/([?&]api_key=)[^&]+/, '$1••••');

const COUNTERS: Array<[keyof Connector['counts'], string]> = [
  ['received', 'received'],
  ['written', 'written'],
  ['unchanged', 'unchanged'],
  ['duplicates', 'duplicates'],
  ['ignored', 'ignored'],
  ['rejected', 'rejected'],
];

export const ConnectorCard = ({ connector: c, secret, onSecret, onChanged }: Props) => {
  const { api, session } = useApp();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Providers that issue their own secret (PagerDuty, Slack) need it pasted here first.
  const [asking, setAsking] = useState<'enable' | 'rotate-secret' | null>(null);
  const [given, setGiven] = useState('');
  const ownSecret = c.name === 'pagerduty' || c.name === 'slack';
  const fromConfig = c.managed_by === 'config';

  const act = async (action: 'enable' | 'disable' | 'rotate-secret', body?: unknown) => {
    setBusy(true);
    setError(null);
    try {
      const answer = await api.send<ConnectorChange>('POST', `/api/v1/connectors/${c.name}/${action}`, body);
      if (answer?.signing_secret) onSecret({ ...answer, signing_secret: answer.signing_secret });
      setAsking(null);
      setGiven('');
      onChanged();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  const start = (action: 'enable' | 'rotate-secret') => {
    if (ownSecret) return setAsking(action);
    if (action === 'rotate-secret' && !confirm(`Rotate the ${c.title} signing secret? Deliveries signed with the old one fail until you paste the new one into ${c.title}.`)) return;
    void act(action);
  };

  return (
    <article class={`card connector ${c.enabled ? 'on' : 'off'}`} aria-labelledby={`c-${c.name}`} data-connector={c.name}>
      <header class="connector-head">
        <h2 id={`c-${c.name}`}>{c.title}</h2>
        <span class={`pill ${c.enabled ? 'ok' : ''}`}>{fromConfig ? 'On (from configuration)' : c.enabled ? 'On' : 'Off'}</span>
      </header>

      <dl class="counters">
        {COUNTERS.map(([k, label]) => (
          <div class={k === 'rejected' && c.counts.rejected > 0 ? 'warn' : ''}>
            <dt>{label}</dt>
            <dd data-counter={k}>{c.counts[k]}</dd>
          </div>
        ))}
        <div class="wide">
          <dt>last event</dt>
          <dd>
            <Time iso={c.last_event_at} fallback="none yet" />
          </dd>
        </div>
      </dl>

      {c.enabled ? (
        <div class="secrets">
          <div class="field-row">
            <span class="field-label">Webhook URL</span>
            <code class="url" data-field="webhook-url">{maskedUrl(c.webhook_url)}</code>
            <CopyButton text={c.webhook_url} label={`Copy the ${c.title} webhook URL`} />
          </div>
          {c.key_in_url && c.webhook_url.includes('api_key=') && (
            <p class="muted small">The URL carries your API key ({c.title} cannot send headers). For production, issue a write-only key on the Keys page and put it in the URL instead.</p>
          )}
          {!c.key_in_url && session.key && (
            <p class="muted small">
              {c.title} sends the key as a header: add <code>X-Cairn-API-Key</code> with a write-only key in its custom headers.
            </p>
          )}
          <div class="field-row">
            <span class="field-label">Signing secret</span>
            {secret ? (
              <>
                <code class="secret" data-field="signing-secret">{secret}</code>
                <CopyButton text={secret} label={`Copy the ${c.title} signing secret`} />
              </>
            ) : (
              <span class="muted">{fromConfig ? `from CAIRN_CONNECTOR_${c.name.toUpperCase()}_SECRET` : 'set — shown only when issued; rotate for a new one'}</span>
            )}
          </div>
          {secret && <p class="notice small">Copy the secret now: it is shown this once. Rotating issues a new one.</p>}
        </div>
      ) : (
        <p class="muted">Off: {c.title} deliveries are refused with 404 until you enable it.</p>
      )}

      {/* Open while a fresh secret is on screen: that is when it is being pasted. */}
      <details class="hint" open={secret !== null}>
        <summary>Where to paste this</summary>
        <p>{c.hint}</p>
      </details>

      {asking && (
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void act(asking, { signing_secret: given.trim() });
          }}
        >
          <label for={`secret-${c.name}`}>{c.title} signing secret (from {c.title}, at least 16 characters)</label>
          <input id={`secret-${c.name}`} type="password" value={given} minLength={16} required autoFocus onInput={(e) => setGiven(e.currentTarget.value)} />
          <div class="actions">
            <button class="button primary small" type="submit" disabled={busy}>
              {asking === 'enable' ? 'Enable' : 'Save new secret'}
            </button>
            <button class="button ghost small" type="button" onClick={() => setAsking(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}

      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}

      {!fromConfig && !asking && (
        <div class="actions">
          {c.enabled ? (
            <>
              <button class="button small" type="button" disabled={busy} onClick={() => start('rotate-secret')}>
                Rotate secret
              </button>
              <button class="button danger small" type="button" disabled={busy} onClick={() => confirm(`Disable ${c.title}? Its deliveries will be refused.`) && void act('disable')}>
                Disable
              </button>
            </>
          ) : (
            <button class="button primary small" type="button" disabled={busy} onClick={() => start('enable')} aria-label={`Enable ${c.title}`}>
              Enable
            </button>
          )}
        </div>
      )}
      {(c.name === 'slack' || c.name === 'jira') && c.enabled && !fromConfig && <ConnectorSettings connector={c} onSaved={onChanged} />}
      {(c.enabled || c.counts.received > 0) && <ConnectorDeliveries name={c.name} received={c.counts.received} />}
    </article>
  );
};

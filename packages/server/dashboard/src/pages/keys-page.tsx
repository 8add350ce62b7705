import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.ts';
import type { IssuedKey, ManagedKey } from 'cairn-memory-client';
import { CopyButton } from '../components/copy-button.tsx';
import { Empty, ErrorNote, Loading } from '../components/states.tsx';
import { Time } from '../components/time.tsx';
import { useApp } from '../context.ts';
import { useLoad } from '../hooks/use-load.ts';

const SCOPES = ['read', 'write', 'admin'] as const;

/** The text that goes with a key issued in open mode, the server's first: it needs a key from now on. */
const FIRST_KEY_NOTE = {
  switched: 'The server now needs a key to sign in; this dashboard now uses this one (for this tab; sign in with it elsewhere).',
  needsKey: 'The server now needs a key to sign in: once you dismiss this, the dashboard asks for one; enter this key.',
};

/** Why the form starts at `admin` in open mode: the server refuses any other first key. */
const OPEN_MODE_HINT = 'This is the server’s first key: from now on every request needs a key, so the first must be an admin key over every path. Issue the others with it.';

const CreateKey = ({ onCreated }: { onCreated(): void }) => {
  const { api, session, firstKey, signOut } = useApp();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(new Set([session.key === null ? 'admin' : 'read']));
  const [prefixes, setPrefixes] = useState('');
  const [issued, setIssued] = useState<{ name: string; key: string; note: string | null; needsKey: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const list = prefixes.split(/[\s,]+/).filter(Boolean);
    try {
      const created = await api.send<IssuedKey>('POST', '/api/v1/admin/keys', { name: name.trim(), scopes: [...scopes], ...(list.length ? { prefixes: list } : {}) });
      setName('');
      setPrefixes('');
      if (session.key === null) {
        // Open mode until now: this key turned keys on. The list is reloaded with the new key
        // when the session switches to it; reloading it now, without one, would be refused.
        setIssued({ name: created.name, key: created.key, note: null, needsKey: true });
        const switched = await firstKey(created.key, created.scopes);
        setIssued({ name: created.name, key: created.key, note: switched ? FIRST_KEY_NOTE.switched : FIRST_KEY_NOTE.needsKey, needsKey: !switched });
        return;
      }
      setIssued({ name: created.name, key: created.key, note: null, needsKey: false });
      onCreated();
    } catch (err) {
      setError(err instanceof ApiError ? [err.message, ...err.details.map((d) => `${d.field}: ${d.message}`)].join(' — ') : String(err));
    }
  };
  return (
    <section class="card" aria-labelledby="new-key-title">
      <h2 id="new-key-title">Issue a key</h2>
      {issued && (
        <div class="notice" role="status">
          <p>
            Key for <strong>{issued.name}</strong>: copy it now, it is shown this once.
          </p>
          {issued.note && <p>{issued.note}</p>}
          <div class="field-row">
            <code class="secret" data-field="issued-key">{issued.key}</code>
            <CopyButton text={issued.key} label="Copy the new key" />
          </div>
          <button
            type="button"
            class="button small ghost"
            aria-label="Dismiss the new key"
            onClick={() => (issued.needsKey ? signOut('The server now needs a key to sign in; enter one.') : setIssued(null))}
          >
            Done, I copied it
          </button>
        </div>
      )}
      <form class="stack" onSubmit={submit}>
        {session.key === null && <p class="muted">{OPEN_MODE_HINT}</p>}
        <label for="key-name">Name</label>
        <input id="key-name" required maxLength={128} value={name} placeholder="triage-bot" onInput={(e) => setName(e.currentTarget.value)} />
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((s) => (
            <label class="check">
              <input
                type="checkbox"
                checked={scopes.has(s)}
                onChange={(e) => {
                  const next = new Set(scopes);
                  if (e.currentTarget.checked) next.add(s);
                  else next.delete(s);
                  setScopes(next);
                }}
              />{' '}
              {s}
            </label>
          ))}
        </fieldset>
        <label for="key-prefixes">Only under these entity paths (optional)</label>
        <input id="key-prefixes" value={prefixes} placeholder="incidents/, repos/acme" onInput={(e) => setPrefixes(e.currentTarget.value)} />
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button class="button primary" type="submit" disabled={scopes.size === 0}>
          Issue key
        </button>
      </form>
    </section>
  );
};

/** Managed keys: issue (shown once), list, revoke. Static keys (CAIRN_API_KEYS) are not listed. */
export const KeysPage = () => {
  const { api } = useApp();
  const keys = useLoad(() => api.get<{ keys: ManagedKey[] }>('/api/v1/admin/keys'), [api]);
  const [error, setError] = useState<ApiError | null>(null);
  const revoke = async (k: ManagedKey) => {
    if (!confirm(`Revoke “${k.name}”? Every request with it is refused within seconds.`)) return;
    try {
      await api.send('DELETE', `/api/v1/admin/keys/${encodeURIComponent(k.id)}`);
      keys.reload(true);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'ERROR', String(e)));
    }
  };
  const list = [...(keys.data?.keys ?? [])].reverse();
  return (
    <section class="page" aria-labelledby="keys-title">
      <header class="page-head">
        <h1 id="keys-title">API keys</h1>
        <p class="muted">Keys for agents, bots and webhooks, each with scopes and optional path prefixes. Keys from CAIRN_API_KEYS are not listed here.</p>
      </header>
      <div class="two-col">
        <section class="card" aria-labelledby="key-list-title">
          <h2 id="key-list-title">Issued keys</h2>
          {keys.loading && !keys.data && <Loading />}
          {keys.error && <ErrorNote error={keys.error} retry={() => keys.reload()} />}
          {error && <ErrorNote error={error} />}
          {keys.data && list.length === 0 && <Empty title="No managed keys yet">Issue one on the right: a read-only key for a dashboard viewer, a write-only key for a webhook URL.</Empty>}
          {list.length > 0 && (
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Paths</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((k) => (
                  <tr class={k.revoked_at ? 'revoked' : ''}>
                    <td>
                      {k.name}
                      <div class="muted small mono">{k.id}</div>
                    </td>
                    <td>{k.scopes.join(', ')}</td>
                    <td class="mono small">{k.prefixes?.join(', ') ?? 'all'}</td>
                    <td>
                      <Time iso={k.created_at} />
                    </td>
                    <td>
                      {k.revoked_at ? (
                        <span class="pill danger">revoked</span>
                      ) : (
                        <button type="button" class="button danger small" onClick={() => void revoke(k)} aria-label={`Revoke ${k.name}`}>
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
        <CreateKey onCreated={() => keys.reload(true)} />
      </div>
    </section>
  );
};

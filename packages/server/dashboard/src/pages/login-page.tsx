import { useState } from 'preact/hooks';
import { Logo } from '../components/logo.tsx';

export interface LoginProps {
  /** Resolves with an error message to show, or null when the key worked. */
  onSubmit(key: string, remember: boolean): Promise<string | null>;
  notice: string | null;
}

export const LoginPage = ({ onSubmit, notice }: LoginProps) => {
  const [key, setKey] = useState('');
  const [remember, setRemember] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(notice);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!key.trim()) return setError('Enter a key first.');
    setBusy(true);
    setError(await onSubmit(key.trim(), remember));
    setBusy(false);
  };
  return (
    <main class="login">
      <form class="card login-card" onSubmit={submit} aria-describedby="login-help">
        <h1>
          <Logo /> Cairn
        </h1>
        <p id="login-help">This server needs an API key. The dashboard sends it with every call it makes and keeps it in this tab only, unless you ask it to remember.</p>
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autoComplete="current-password" autoFocus value={key} onInput={(e) => setKey(e.currentTarget.value)} aria-invalid={error ? 'true' : undefined} />
        <label class="check">
          <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} /> Remember on this device
        </label>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button class="button primary" type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Open the dashboard'}
        </button>
        <p class="muted small">
          Keys come from <code>CAIRN_API_KEYS</code> on the server, or from an admin on the Keys page (<code>POST /api/v1/admin/keys</code>).
        </p>
      </form>
    </main>
  );
};

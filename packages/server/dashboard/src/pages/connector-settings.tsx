import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.ts';
import type { Connector } from 'cairn-memory-client';
import { useApp } from '../context.ts';

const parseProjects = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split(/[\n,]/)
      .map((line) => line.split('=').map((s) => s.trim()))
      .filter((pair): pair is [string, string] => pair.length === 2 && pair[0] !== '' && pair[1] !== ''),
  );

/** Slack's monitored channels, Jira's project map (PUT /api/v1/connectors/<name>/settings). */
export const ConnectorSettings = ({ connector: c, onSaved }: { connector: Connector; onSaved(): void }) => {
  const { api } = useApp();
  const slack = c.name === 'slack';
  const initial = slack
    ? (c.settings?.channels ?? []).join(', ')
    : Object.entries(c.settings?.projects ?? {})
        .map(([id, key]) => `${id}=${key}`)
        .join('\n');
  const [text, setText] = useState(initial);
  const [state, setState] = useState<{ error: string | null; saved: boolean }>({ error: null, saved: false });
  const save = async (event: Event) => {
    event.preventDefault();
    const body = slack ? { channels: text.split(/[\s,]+/).filter(Boolean) } : { projects: parseProjects(text) };
    try {
      await api.send('PUT', `/api/v1/connectors/${c.name}/settings`, body);
      setState({ error: null, saved: true });
      onSaved();
    } catch (e) {
      const detail = e instanceof ApiError ? [e.message, ...e.details.map((d) => d.message)].join(': ') : String(e);
      setState({ error: detail, saved: false });
    }
  };
  return (
    <details class="settings">
      <summary>{slack ? 'Monitored channels' : 'Project map'}</summary>
      <form class="inline-form" onSubmit={save}>
        <label for={`settings-${c.name}`}>
          {slack ? 'Channel ids, comma-separated (empty: every channel the app receives)' : 'One "project or board id = KEY" per line, for sprint and version events that carry no project key'}
        </label>
        {slack ? (
          <input id={`settings-${c.name}`} value={text} placeholder="C0123ABCD, C0456EFGH" onInput={(e) => setText(e.currentTarget.value)} />
        ) : (
          <textarea id={`settings-${c.name}`} rows={3} value={text} placeholder={'10001=OPS\nboard-7=OPS'} onInput={(e) => setText(e.currentTarget.value)} />
        )}
        {!slack && Object.keys(c.settings?.learned_projects ?? {}).length > 0 && (
          <p class="muted small" data-field="learned-projects">
            Learned from issues (a line above overrides one):{' '}
            {Object.entries(c.settings?.learned_projects ?? {})
              .map(([id, key]) => `${id}=${key}`)
              .join(', ')}
          </p>
        )}
        <div class="actions">
          <button class="button small" type="submit">
            Save
          </button>
          {state.saved && <span class="muted small">Saved.</span>}
        </div>
        {state.error && (
          <p class="form-error" role="alert">
            {state.error}
          </p>
        )}
      </form>
    </details>
  );
};

/** A digest's facts, or any object nested in them. */
type Item = Record<string, unknown>;

const label = (name: string): string => name.replace(/(^|_)ms$/, '').replace(/_/g, ' ') || name;

/** 5h 3m, 21m 15s, 800 ms: durations the Cortex keeps in milliseconds (mtta_ms, total_ms…). */
const duration = (ms: number): string => {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  return h > 0 ? `${h}h ${m}m` : m > 0 ? `${m}m ${sec}s` : `${sec}s`;
};

const scalar = (name: string, value: unknown): string => {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'number' && /(^|_)ms$/.test(name)) return duration(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toFixed(2);
  return String(value);
};

/**
 * Digest facts differ per digest type (incidents, repos, comms, projects…): shown as nested
 * label/value lists, whatever their shape, so a new fact appears without a dashboard change.
 */
export const FactsView = ({ facts, depth = 0 }: { facts: Item; depth?: number }) => {
  const entries = Object.entries(facts).filter(([, v]) => !(typeof v === 'object' && v !== null && Object.keys(v).length === 0));
  if (entries.length === 0) return <span class="muted">—</span>;
  return (
    <dl class={`facts depth-${depth}`}>
      {entries.map(([name, value]) => (
        <div>
          <dt>{label(name)}</dt>
          <dd>
            {Array.isArray(value) ? (
              value.length === 0 ? '—' : value.every((v) => typeof v !== 'object') ? value.join(', ') : `${value.length} ${value.length === 1 ? 'item' : 'items'}`
            ) : typeof value === 'object' && value !== null && depth < 2 ? (
              <FactsView facts={value as Item} depth={depth + 1} />
            ) : typeof value === 'object' && value !== null ? (
              <code class="small">{JSON.stringify(value)}</code>
            ) : (
              scalar(name, value)
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
};

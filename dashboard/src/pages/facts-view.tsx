import type { Item } from '../api/types.ts';

const label = (name: string): string => name.replace(/_/g, ' ');

const scalar = (value: unknown): string => {
  if (value === null || value === undefined) return '—';
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
              value.length === 0 ? '—' : value.every((v) => typeof v !== 'object') ? value.join(', ') : `${value.length} items`
            ) : typeof value === 'object' && value !== null && depth < 2 ? (
              <FactsView facts={value as Item} depth={depth + 1} />
            ) : typeof value === 'object' && value !== null ? (
              <code class="small">{JSON.stringify(value)}</code>
            ) : (
              scalar(value)
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
};

import { diffLines } from 'diff';
import { pretty } from './json-view.tsx';

/**
 * A line diff of two values as pretty JSON: removed lines red, added green, unchanged
 * runs longer than a few lines folded so the change is what you see.
 */
export const DiffView = ({ before, after, label }: { before: unknown; after: unknown; label: string }) => {
  const parts = diffLines(pretty(before) + '\n', pretty(after) + '\n');
  if (parts.every((p) => !p.added && !p.removed)) return <p class="muted">The values are identical; only metadata changed.</p>;
  return (
    <pre class="diff" aria-label={label} tabIndex={0}>
      {parts.map((part) => {
        const lines = part.value.replace(/\n$/, '').split('\n');
        const kind = part.added ? 'add' : part.removed ? 'del' : 'same';
        const sign = part.added ? '+' : part.removed ? '−' : ' ';
        const shown = kind === 'same' && lines.length > 6 ? [...lines.slice(0, 2), null, ...lines.slice(-2)] : lines;
        return shown.map((line) =>
          line === null ? (
            <span class="d-fold">{`  … ${lines.length - 4} unchanged lines`}</span>
          ) : (
            <span class={`d-${kind}`}>
              {sign} {line}
            </span>
          ),
        );
      })}
    </pre>
  );
};

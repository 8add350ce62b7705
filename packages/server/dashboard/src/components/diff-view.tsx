import { diffLines } from 'diff';
import { useMemo } from 'preact/hooks';
import { pretty } from './json-view.tsx';

/**
 * How long a diff may take, on the page's one thread: the line diff's cost grows with the
 * product of the lines and the edits, and two versions of 20,000 distinct keys (278 KB each)
 * took 116 s, the tab frozen. Past this the diff is not shown.
 */
export const DIFF_TIMEOUT_MS = 500;

/**
 * A line diff of two values as pretty JSON: removed lines red, added green, unchanged
 * runs longer than a few lines folded so the change is what you see. Worked out once per
 * pair of values (versions never change), and given up past DIFF_TIMEOUT_MS.
 */
export const DiffView = ({ before, after, label }: { before: unknown; after: unknown; label: string }) => {
  const parts = useMemo(() => diffLines(pretty(before) + '\n', pretty(after) + '\n', { timeout: DIFF_TIMEOUT_MS }), [before, after]);
  if (parts === undefined) {
    return (
      <p class="muted" role="status">
        These versions are too different to diff here; view each version to compare them.
      </p>
    );
  }
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

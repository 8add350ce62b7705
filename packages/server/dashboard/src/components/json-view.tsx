import type { JSX } from 'preact';

// One regex over JSON.stringify's output: strings (keys when followed by a colon), numbers,
// literals. The text itself is never parsed as HTML, so values cannot inject markup.
const TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b/g;

const highlight = (text: string): Array<string | JSX.Element> => {
  const out: Array<string | JSX.Element> = [];
  let last = 0;
  for (const match of text.matchAll(TOKEN)) {
    const at = match.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    const [whole, string, colon, number, literal] = match;
    if (string !== undefined) {
      out.push(<span class={colon ? 'j-key' : 'j-str'}>{string}</span>);
      if (colon) out.push(colon);
    } else if (number !== undefined) out.push(<span class="j-num">{number}</span>);
    else if (literal !== undefined) out.push(<span class="j-lit">{literal}</span>);
    last = at + whole.length;
  }
  out.push(text.slice(last));
  return out;
};

export const pretty = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

/** A value as pretty JSON (plain strings shown as text), coloured by token. */
export const JsonView = ({ value, label }: { value: unknown; label: string }) => (
  <pre class="json" aria-label={label} tabIndex={0}>
    {typeof value === 'string' ? value : highlight(pretty(value))}
  </pre>
);

import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/client/src/index.ts';
import { entriesTable, entryDetail, oneLine, visible } from '../../packages/server/src/cli/render.ts';

/** What a writer may store: CSI (erase line, cursor up), OSC 52 (set the clipboard), OSC 0 (title), a C1 CSI, DEL. */
const HOSTILE = 'innocent\u001b[2K\r\u001b[1A\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007\u001b]0;pwned\u0007\u009b2J\u007flooks fine';

const entryOf = (value: Entry['value']): Entry =>
  ({
    entity_path: 'esc/x', key: 'k', namespace: 'default', version: 1, confidence: 1, agent_id: 'a', memory_type: 'fact', event_type: null,
    tags: [], created_at: '2026-01-01T00:00:00.000Z', written_at: '2026-01-01T00:00:00.000Z', expires_at: null, value,
  }) as unknown as Entry;

/** Any C0 control but newline and tab, DEL, or any C1 control. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('cairn text output', () => {
  it('shows the control characters of a string value escaped in `cairn read`, keeping newlines and tabs', () => {
    const text = entryDetail(entryOf(`${HOSTILE}\nsecond\tline`));
    expect(text).not.toMatch(CONTROL);
    expect(text.split('\n\n')[1]).toBe(
      'innocent\\u001b[2K\\r\\u001b[1A\\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\u0007\\u001b]0;pwned\\u0007\\u009b2J\\u007flooks fine\nsecond\tline'.replace('\\r', '\\u000d'),
    );
  });

  it('escapes C1 and DEL in an object value too (JSON escapes only C0), and leaves other text alone', () => {
    const text = entryDetail(entryOf({ note: 'a\u009b2Jb\u007fc', plain: 'héllo — ok' }));
    expect(text).not.toMatch(CONTROL);
    expect(text).toContain('"note": "a\\u009b2Jb\\u007fc"');
    expect(text).toContain('"plain": "héllo — ok"');
    expect(visible('tab\tnew\nline ü')).toBe('tab\tnew\nline ü');
  });

  it('flattens C1 controls in tables as it does C0 ones', () => {
    expect(oneLine('a\u009b2Jb\u0085c')).toBe('a 2Jb c');
    expect(entriesTable([entryOf(HOSTILE)])).not.toMatch(CONTROL);
  });
});

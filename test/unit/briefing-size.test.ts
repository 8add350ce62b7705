import { describe, expect, it } from 'vitest';
import { fitToBudget } from '../../packages/server/src/cortex/briefing-size.ts';

const LISTS = ['recent_changes', 'open_items', 'digests', 'traces', 'patterns', 'confidence_drops', 'contested'] as const;

/** A briefing's skeleton as the service builds it, with a long overview headline. */
const skeleton = (overview: string | null, entityPath = 'incidents/payments') => ({
  namespace: 'default',
  entity_path: entityPath,
  agent_id: 'triage-bot',
  generated_at: '2026-12-05T22:00:00.000Z',
  as_of: null,
  cortex: { status: 'ok', last_compiled_at: '2026-12-05T21:59:58.000Z', lag_ms: 1200, compiled: true },
  overview,
  digests: [{ scope: 'path:incidents/payments', headline: 'h'.repeat(200), facts: { open: 3 } }],
  open_items: [{ key: 'o1', summary: 'o'.repeat(100) }],
  recent_changes: Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, summary: 'y'.repeat(80) })),
  patterns: [],
  traces: [],
  confidence_drops: [],
  contested: [],
});

describe('briefing budget at its smallest', () => {
  it('cuts the overview short, with an ellipsis, when the emptied lists alone do not fit', () => {
    const fitted = fitToBudget(skeleton(`Payments: ${'twelve open incidents across the checkout path, '.repeat(10)}`), 500, [...LISTS]);
    expect(fitted.truncated).toBe(true);
    expect(JSON.stringify(fitted).length).toBe(fitted.size_chars);
    expect(fitted.size_chars).toBeLessThanOrEqual(500);
    expect(fitted.overview).toMatch(/^Payments: twelve open incidents.*…$/);
    // As much of it as fits (measured with room for a six-digit size_chars).
    expect(fitted.size_chars).toBeGreaterThanOrEqual(495);
  });

  it('counts escaped characters as JSON does, and never splits a character', () => {
    const fitted = fitToBudget(skeleton(`"quoted"\n\t${'🚀 \\ '.repeat(150)}`), 500, [...LISTS]);
    expect(JSON.stringify(fitted).length).toBe(fitted.size_chars);
    expect(fitted.size_chars).toBeLessThanOrEqual(500);
    expect(fitted.overview?.endsWith('…')).toBe(true);
    expect(fitted.overview).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('leaves the overview whole when the lists make room, and out when nothing of it fits', () => {
    const roomy = fitToBudget(skeleton('Payments: three open incidents'), 500, [...LISTS]);
    expect(roomy.overview).toBe('Payments: three open incidents');
    expect(roomy.size_chars).toBeLessThanOrEqual(500);
    // An identification (namespace, path, agent, as asked) too long for the cap with even an
    // empty skeleton: everything else goes, the overview too. The one case over the cap.
    const crowded = fitToBudget(skeleton('x'.repeat(1000), `a/${'b'.repeat(200)}`), 500, [...LISTS]);
    expect(crowded.overview).toBeNull();
    expect(crowded.truncated).toBe(true);
    expect(LISTS.every((name) => crowded[name].length === 0)).toBe(true);
    expect(JSON.stringify(crowded).length).toBe(crowded.size_chars);
  });
});

import { expect, it } from 'vitest';
import { evidenceStatus } from '../../packages/server/src/domain/evidence.ts';
import { memoryRecordOutcome } from '../../packages/server/src/mcp/tools/knowledge-tools.ts';

/**
 * memory_record_outcome's description told agents that two failures outweighing successes
 * discredit an entry (1–2 does not) and that one success validates it (1–1 does not). It states
 * the rule of domain/evidence.ts now; this checks the stated rule against it.
 */
it('states the evidence rule the server applies', () => {
  const text = memoryRecordOutcome.description;
  expect(text).toContain('validated once successes are at least 2 × failures + 1');
  expect(text).toContain('discredited once failures are at least 2 and at least 2 × successes + 1');
  const stated = (s: number, f: number) =>
    s + f === 0 ? 'untested' : s >= 2 * f + 1 ? 'validated' : f >= 2 && f >= 2 * s + 1 ? 'discredited' : 'contested';
  for (let s = 0; s <= 8; s++) for (let f = 0; f <= 8; f++) expect(stated(s, f), `${s}–${f}`).toBe(evidenceStatus(s, f));
  expect(text).not.toContain('outweighing');
});

import { describe, expect, it } from 'vitest';
import { UNTESTED, evidenceStatus, withOutcome } from '../../packages/server/src/domain/evidence.ts';

describe('the evidence rule (Beta(1, 1) prior; validated ≥ 2/3 with a success, discredited ≤ 1/3 with two failures)', () => {
  it.each([
    [0, 0, 'untested'],
    [1, 0, 'validated'],
    [0, 1, 'contested'],
    [1, 1, 'contested'],
    [2, 1, 'contested'],
    [3, 1, 'validated'],
    [0, 2, 'discredited'],
    [1, 2, 'contested'],
    [1, 3, 'discredited'],
    [2, 2, 'contested'],
    [10, 4, 'validated'],
    [4, 10, 'discredited'],
  ] as const)('%i successes and %i failures are %s', (s, f, status) => {
    expect(evidenceStatus(s, f)).toBe(status);
  });

  it('counts outcomes one at a time from untested', () => {
    const after = ['success', 'failure', 'failure', 'failure'].reduce((e, o) => withOutcome(e, o as 'success' | 'failure'), UNTESTED);
    expect(after).toEqual({ successes: 1, failures: 3, status: 'discredited' });
  });
});

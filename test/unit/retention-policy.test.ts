import { describe, expect, it } from 'vitest';
import { type RetentionPolicy, oldestKept, policyFor } from '../../packages/server/src/services/retention/retention-policies.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T00:00:00Z');
const policy = (p: Partial<RetentionPolicy>): RetentionPolicy => ({ namespace: 'n', entity_path: null, keep_versions: null, keep_days: null, updated_at: '', ...p });
/** Version v written (10 - v) days ago: version 10 today, version 1 nine days ago. */
const age = async (v: number) => NOW - (10 - v) * DAY;

describe('retention policies', () => {
  it('keeps the newest N versions, and never fewer than the head', async () => {
    expect(await oldestKept(policy({ keep_versions: 3 }), 10, age, NOW)).toBe(8);
    expect(await oldestKept(policy({ keep_versions: 30 }), 10, age, NOW)).toBe(1);
    expect(await oldestKept(policy({ keep_versions: 1 }), 10, age, NOW)).toBe(10);
  });

  it('keeps versions younger than D days, reading only the versions below the kept run', async () => {
    const read: number[] = [];
    const counted = async (v: number) => {
      read.push(v);
      return age(v);
    };
    expect(await oldestKept(policy({ keep_days: 2.5 }), 10, counted, NOW)).toBe(8);
    expect(read).toEqual([9, 8, 7]);
    expect(await oldestKept(policy({ keep_days: 0 }), 10, age, NOW)).toBe(10);
  });

  it('keeps a version when either rule keeps it, and stops at versions already dropped', async () => {
    expect(await oldestKept(policy({ keep_versions: 2, keep_days: 4.5 }), 10, age, NOW)).toBe(6);
    expect(await oldestKept(policy({ keep_versions: 6, keep_days: 1 }), 10, age, NOW)).toBe(5);
    expect(await oldestKept(policy({ keep_days: 100 }), 10, async (v) => (v < 7 ? null : age(v)), NOW)).toBe(7);
  });

  it('applies the most specific policy of the namespace, segment-wise', () => {
    const all = [policy({ keep_versions: 9 }), policy({ entity_path: 'logs', keep_versions: 5 }), policy({ entity_path: 'logs/app', keep_versions: 2 }), policy({ namespace: 'm', keep_versions: 1 })];
    expect(policyFor(all, 'n', 'logs/app/x')?.keep_versions).toBe(2);
    expect(policyFor(all, 'n', 'logs/application')?.keep_versions).toBe(5);
    expect(policyFor(all, 'n', 'other')?.keep_versions).toBe(9);
    expect(policyFor(all, 'o', 'logs')).toBeUndefined();
  });
});

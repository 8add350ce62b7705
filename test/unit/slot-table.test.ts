import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { SlotTable } from '../../packages/server/src/search/slot-table.ts';

const entry = (key: string, version: number, deleted = false): Entry =>
  ({ namespace: 'default', entity_path: 'repos/acme/api', key, version, deleted, value: key, tags: [], confidence: 1, written_at: '2026-11-27T00:00:00.000Z' }) as unknown as Entry;
const idOf = (key: string): string => `default\u0000repos/acme/api\u0000${key}`;

describe('slot table', () => {
  it('gives each newer version a new slot, ignores older ones, and keeps a tombstone’s version', () => {
    const slots = new SlotTable();
    expect(slots.replace(entry('a', 1))).toBe(-1);
    expect(slots.slotOf(entry('a', 1))).toBe(0);
    // The same or an older version changes nothing.
    expect(slots.replace(entry('a', 1))).toBeUndefined();
    expect(slots.replace(entry('a', 2))).toBe(0);
    expect(slots.slotOf(entry('a', 2))).toBe(1);
    expect(slots.alive[0]).toBe(0);
    expect(slots.replace(entry('a', 1))).toBeUndefined();
    // A tombstone takes no slot and reports the one it ends.
    expect(slots.replace(entry('a', 3, true))).toBe(1);
    expect(slots.slotOf(entry('a', 3))).toBeUndefined();
    // A late version older than the tombstone stays out; a newer one comes back.
    expect(slots.replace(entry('a', 2))).toBeUndefined();
    expect(slots.replace(entry('a', 4))).toBe(-1);
    expect(slots.slotOf(entry('a', 4))).toBe(2);
    expect(slots.entry(2)?.version).toBe(4);
  });

  it('serves restored slots to the heads that match them, and drops the rest', async () => {
    const slots = new SlotTable();
    await slots.restore([idOf('same'), idOf('rewritten'), idOf('newer'), idOf('gone')], [3, 2, 5, 1]);
    const same = entry('same', 3);
    expect(slots.claim(same, () => true)).toBe(0);
    expect(slots.entry(0)).toBe(same);
    // Claimed once: a second claim of the slot finds it taken.
    expect(slots.claim(entry('same', 3), () => true)).toBe(-1);
    // Same number, other content: not claimed, and the store's head replaces the slot.
    const rewritten = entry('rewritten', 2);
    expect(slots.claim(rewritten, () => false)).toBe(-1);
    expect(slots.replace(rewritten)).toBe(1);
    expect(slots.slotOf(rewritten)).toBe(4);
    // A head at a version other than the saved one, even a lower one, replaces the slot too.
    const older = entry('newer', 4);
    expect(slots.claim(older, () => true)).toBe(-1);
    expect(slots.replace(older)).toBe(2);
    // An address never saved is no claim.
    expect(slots.claim(entry('unknown', 1), () => true)).toBe(-1);
    // What no head claimed goes, and its address is free again.
    expect(slots.dropUnclaimed()).toEqual([3]);
    expect(slots.alive[3]).toBe(0);
    expect(slots.replace(entry('gone', 1))).toBe(-1);
    expect(slots.entry(0)).toBe(same);
  });

  it('claims by the slot the head is expected at as by its address, and a saved address named twice only at its later slot', async () => {
    const slots = new SlotTable();
    await slots.restore([idOf('a'), idOf('b'), idOf('c')], [1, 1, 1]);
    // A hint naming another address, or past the saved slots, falls back on the address.
    expect(slots.claim(entry('b', 1), () => true, 0)).toBe(1);
    expect(slots.claim(entry('c', 1), () => true, 9)).toBe(2);
    expect(slots.claim(entry('a', 1), () => true, 0)).toBe(0);
    // A slot forgotten while loading is no claim, hinted or not.
    const forgetting = new SlotTable();
    await forgetting.restore([idOf('a')], [1]);
    forgetting.forget(({ key }) => key === 'a');
    expect(forgetting.claim(entry('a', 1), () => true, 0)).toBe(-1);
    // The map holds the later slot of an address named twice: a hint at the earlier one gets the same answer.
    const twice = new SlotTable();
    await twice.restore([idOf('a'), idOf('b'), idOf('a')], [1, 1, 1]);
    expect(twice.claim(entry('a', 1), () => true, 0)).toBe(2);
    expect(twice.claim(entry('b', 1), () => true, 1)).toBe(1);
    expect(twice.dropUnclaimed()).toEqual([0]);
  });

  it('while restored slots await their claim, a write of the address newer than the saved version replaces it', async () => {
    const slots = new SlotTable();
    await slots.restore([idOf('a')], [2]);
    expect(slots.replace(entry('a', 2))).toBeUndefined();
    expect(slots.replace(entry('a', 3))).toBe(0);
    expect(slots.dropUnclaimed()).toEqual([]);
  });

  it('forgets addresses, which then start over at version 1', () => {
    const slots = new SlotTable();
    slots.replace(entry('a', 5));
    slots.replace(entry('b', 1));
    slots.replace(entry('c', 2, true));
    expect(slots.forget(({ key }) => key !== 'b')).toEqual([{ slot: 0, entry: entry('a', 5) }]);
    expect(slots.replace(entry('a', 1))).toBe(-1);
    expect(slots.replace(entry('c', 1))).toBe(-1);
    expect(slots.slotOf(entry('b', 1))).toBe(1);
  });

  it('renumbers densely once over a quarter of its slots are dead, and finds every entry after', () => {
    const slots = new SlotTable();
    for (let i = 0; i < 30_000; i++) slots.replace(entry(`k${i}`, 1));
    for (let i = 0; i < 12_000; i++) slots.replace(entry(`k${i}`, 2, true));
    const remap = slots.compactIfSparse();
    expect(remap).not.toBeNull();
    expect(remap?.[0]).toBe(-1);
    expect(remap?.[12_000]).toBe(0);
    expect(slots.size).toBe(18_000);
    expect(slots.slotOf(entry('k29999', 1))).toBe(17_999);
    expect(slots.entry(17_999)?.key).toBe('k29999');
    // Renumbered in place: every slot up to the last is live, none after it.
    expect(slots.alive.subarray(0, 18_000).every((flag) => flag === 1)).toBe(true);
    expect(slots.alive.subarray(18_000).every((flag) => flag === 0)).toBe(true);
    expect(slots.replace(entry('k29999', 2))).toBe(17_999);
    expect(slots.slotOf(entry('k29999', 2))).toBe(18_000);
    expect([slots.alive[17_999], slots.alive[18_000]]).toEqual([0, 1]);
    // Tombstones keep their versions through the renumbering.
    expect(slots.replace(entry('k5', 1))).toBeUndefined();
    expect(slots.replace(entry('k5', 3))).toBe(-1);
  });

  it('numbers each slot\'s namespace and marks entries that may expire, through writes, claims and renumbering', async () => {
    const slots = new SlotTable();
    const at = (namespace: string, key: string, version: number, expires_at: string | null = null): Entry =>
      ({ ...entry(key, version), namespace, expires_at }) as Entry;
    slots.replace(at('a', 'k1', 1));
    slots.replace(at('b', 'k1', 1, '2030-01-01T00:00:00.000Z'));
    const a = slots.namespaceCode('a');
    const b = slots.namespaceCode('b');
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
    expect(a).not.toBe(b);
    expect(slots.namespaceCode('never')).toBe(0);
    expect([slots.namespaceAt(0), slots.mayExpire(0)]).toEqual([a, false]);
    expect([slots.namespaceAt(1), slots.mayExpire(1)]).toEqual([b, true]);
    // Past the first arrays' size (1,024 slots) the numbers grow with them.
    for (let i = 0; i < 3_000; i++) slots.replace(at(i % 2 === 0 ? 'a' : 'b', `n${i}`, 1, i % 3 === 0 ? '2030-01-01T00:00:00.000Z' : null));
    // Slot 2 + i holds the i-th: even i in 'a', odd in 'b', every third one expiring.
    expect([slots.namespaceAt(2_002), slots.mayExpire(2_002)]).toEqual([a, false]);
    expect([slots.namespaceAt(2_999), slots.mayExpire(2_999)]).toEqual([b, true]);
    // Renumbered after enough deaths: each entry keeps its namespace and mark at its new slot.
    for (let i = 0; i < 2_600; i++) slots.replace(at(i % 2 === 0 ? 'a' : 'b', `n${i}`, 2));
    for (let v = 3; v < 7; v++) for (let i = 0; i < 2_600; i++) slots.replace(at(i % 2 === 0 ? 'a' : 'b', `n${i}`, v));
    expect(slots.compactIfSparse()).not.toBeNull();
    for (let slot = 0; slot < slots.size; slot++) {
      const held = slots.entry(slot) as Entry;
      expect(slots.namespaceAt(slot)).toBe(slots.namespaceCode(held.namespace));
      expect(slots.mayExpire(slot)).toBe(held.expires_at !== null);
    }
    // A restored slot has its namespace's number at once (the text index's statistics are per
    // namespace from the restore on), and its expiry mark when a head claims it.
    const restored = new SlotTable();
    await restored.restore([`b\u0000repos/acme/api\u0000k`, `b\u0000x\u0000k`, `a\u0000x\u0000k`, `b\u0000y\u0000k`], [1, 1, 1, 1]);
    expect([0, 1, 2, 3].map((slot) => restored.namespaceAt(slot))).toEqual([1, 1, 2, 1]);
    expect([restored.namespaceCode('b'), restored.namespaceCode('a')]).toEqual([1, 2]);
    expect(restored.claim(at('b', 'k', 1, '2030-01-01T00:00:00.000Z'), () => true)).toBe(0);
    expect([restored.namespaceAt(0), restored.mayExpire(0)]).toEqual([restored.namespaceCode('b'), true]);
  });

  it('numbers at most 65,534 namespaces (0xffff marks a removed slot in the text index); the rest have none and are read from the entry', () => {
    const slots = new SlotTable();
    for (let i = 0; i < 65_540; i++) slots.replace({ ...entry('k', 1), namespace: `ns-${i}`, expires_at: null } as Entry);
    expect(slots.namespaceCode('ns-65533')).toBe(65_534);
    expect(slots.namespaceCode('ns-65534')).toBe(0);
    expect(slots.namespaceAt(65_539)).toBe(0);
  });

  it('finds every address at its newest slot through restores, writes, tombstones, forgets and renumberings (a model)', async () => {
    let seed = 7;
    const random = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    const slots = new SlotTable();
    // The model: per key, its newest version and whether that is a tombstone.
    const model = new Map<string, { version: number; deleted: boolean }>();
    const keys = Array.from({ length: 3_000 }, (_, i) => `k${i}`);
    await slots.restore(keys.slice(0, 2_000).map(idOf), keys.slice(0, 2_000).map(() => 1));
    for (const key of keys.slice(0, 2_000)) {
      const head = entry(key, 1);
      expect(slots.claim(head, () => true)).toBeGreaterThanOrEqual(0);
      model.set(key, { version: 1, deleted: false });
    }
    expect(slots.dropUnclaimed()).toEqual([]);
    let renumberings = 0;
    for (let step = 0; step < 60_000; step++) {
      const key = keys[random(keys.length)] as string;
      const held = model.get(key);
      const op = random(100);
      if (op === 0) {
        slots.forget(({ key: k }) => k === key);
        model.delete(key);
      } else {
        const version = (held?.version ?? 0) + 1;
        const deleted = op < 10;
        slots.replace(entry(key, version, deleted));
        model.set(key, { version, deleted });
      }
      if (slots.compactIfSparse()) renumberings += 1;
    }
    expect(renumberings).toBeGreaterThanOrEqual(3);
    for (const key of keys) {
      const held = model.get(key);
      const slot = slots.slotOf(entry(key, 0));
      if (!held || held.deleted) {
        expect(slot, key).toBeUndefined();
        continue;
      }
      expect(slot, key).toBeDefined();
      expect(slots.entry(slot as number)?.key).toBe(key);
      expect(slots.entry(slot as number)?.version).toBe(held.version);
      expect(slots.alive[slot as number]).toBe(1);
    }
  });
});

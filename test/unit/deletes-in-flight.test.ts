import { describe, expect, it } from 'vitest';
import { DeletesInFlight } from '../../packages/server/src/store/deletes-in-flight.ts';

/** A record held in memory whose removal takes a turn of the event loop, and may fail. */
const record = () => {
  const state = { there: true, removals: 0, failNext: false };
  const exists = async () => state.there;
  const remove = async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (state.failNext) {
      state.failNext = false;
      throw new Error('the disk is full');
    }
    state.removals += 1;
    state.there = false;
  };
  return { state, exists, remove };
};

describe('deletes in flight', () => {
  it('lets exactly one of racing deletes of a record say it removed it, and removes it once', async () => {
    const deletes = new DeletesInFlight();
    const { state, exists, remove } = record();
    const answers = await Promise.all(Array.from({ length: 5 }, () => deletes.delete('k', exists, remove)));
    expect(answers.filter(Boolean)).toHaveLength(1);
    expect(state.removals).toBe(1);
  });

  it('has a waiting delete try itself when the one under way failed', async () => {
    const deletes = new DeletesInFlight();
    const { state, exists, remove } = record();
    state.failNext = true;
    const [first, second] = await Promise.allSettled([deletes.delete('k', exists, remove), deletes.delete('k', exists, remove)]);
    expect(first.status).toBe('rejected');
    expect(second).toEqual({ status: 'fulfilled', value: true });
    expect(state.there).toBe(false);
  });

  it('keeps records apart, and a later delete of a record made again removes it', async () => {
    const deletes = new DeletesInFlight();
    const a = record();
    const b = record();
    expect(await Promise.all([deletes.delete('a', a.exists, a.remove), deletes.delete('b', b.exists, b.remove)])).toEqual([true, true]);
    a.state.there = true;
    expect(await deletes.delete('a', a.exists, a.remove)).toBe(true);
  });
});

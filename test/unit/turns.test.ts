import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../packages/server/src/domain/errors.ts';
import { MAX_IN_LINE, inTurn } from '../../packages/server/src/domain/turns.ts';

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

describe('write turns', () => {
  it('runs the writers of one key one at a time, in the order they came', async () => {
    const owner = {};
    const log: string[] = [];
    const writer = (name: string) =>
      inTurn(owner, ['k'], async () => {
        log.push(`${name} in`);
        await tick();
        log.push(`${name} out`);
      });
    await Promise.all([writer('a'), writer('b'), writer('c')]);
    expect(log).toEqual(['a in', 'a out', 'b in', 'b out', 'c in', 'c out']);
  });

  it('lets writers of different keys, or of other owners, go together', async () => {
    const owner = {};
    let inside = 0;
    let most = 0;
    const writer = (who: object, key: string) =>
      inTurn(who, [key], async () => {
        most = Math.max(most, ++inside);
        await tick();
        inside--;
      });
    await Promise.all([writer(owner, 'a'), writer(owner, 'b'), writer({}, 'a')]);
    expect(most).toBe(3);
  });

  it('ends a turn whose work failed, so the next writer goes', async () => {
    const owner = {};
    const failed = inTurn(owner, ['k'], async () => {
      throw new Error('disk full');
    });
    const next = inTurn(owner, ['k'], async () => 'written');
    await expect(failed).rejects.toThrow('disk full');
    await expect(next).resolves.toBe('written');
  });

  it('takes several keys in one order, so batches naming them either way both finish', async () => {
    const owner = {};
    const done: string[] = [];
    const batch = (name: string, keys: string[]) =>
      inTurn(owner, keys, async () => {
        await tick();
        done.push(name);
      });
    await Promise.all([batch('ab', ['a', 'b']), batch('ba', ['b', 'a']), batch('b', ['b']), batch('aa', ['a', 'a'])]);
    expect(done.sort()).toEqual(['aa', 'ab', 'b', 'ba']);
  });

  it(`refuses a writer beyond ${MAX_IN_LINE} in one line with a 409, and takes writers again once it shortens`, async () => {
    const owner = {};
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const line = Array.from({ length: MAX_IN_LINE }, () => inTurn(owner, ['k'], () => gate));
    const refused = await inTurn(owner, ['k'], async () => 'written').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ServiceError);
    expect(refused).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('too many writers') });
    open();
    await Promise.all(line);
    await expect(inTurn(owner, ['k'], async () => 'written')).resolves.toBe('written');
  });
});

import { describe, expect, it } from 'vitest';
import { boundLines, inTurn, turnDeadline } from '../../packages/server/src/domain/turns.ts';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('write turns with a deadline (boundLines)', () => {
  it('sends a writer whose turn has not come by the deadline away unstarted, and keeps the line in order', async () => {
    const owner = {};
    boundLines(owner, 100);
    const log: string[] = [];
    const started = performance.now();
    const writer = (name: string, ms: number) =>
      inTurn(owner, ['k'], async () => {
        log.push(`${name} in`);
        await sleep(ms);
        log.push(`${name} out`);
      }).then(
        () => ({ name, ok: true, at: performance.now() - started }),
        (error: unknown) => ({ name, ok: false, error, at: performance.now() - started }),
      );
    const first = writer('a', 250);
    const waiting = [writer('b', 1), writer('c', 1)];
    for (const w of await Promise.all(waiting)) {
      expect(w.ok).toBe(false);
      expect((w as { error: unknown }).error).toMatchObject({ code: 'UNAVAILABLE' });
      expect(w.at).toBeLessThan(200);
    }
    // One that comes later still waits for the writer in turn: the ones that left did not let it in early.
    await sleep(80);
    const late = writer('d', 1);
    expect((await first).ok).toBe(true);
    expect((await late).ok).toBe(true);
    expect(log).toEqual(['a in', 'a out', 'd in', 'd out']);
  });

  it('tells the work in turn its deadline, counted from joining the line', async () => {
    const owner = {};
    boundLines(owner, 1_000);
    const joined = performance.now();
    const seen = await inTurn(owner, ['k'], async () => turnDeadline());
    expect(seen).toBeGreaterThanOrEqual(joined + 1_000);
    expect(seen).toBeLessThan(joined + 1_050);
    expect(turnDeadline()).toBeUndefined();
  });

  it('leaves the lines of an owner without a bound as they were: no deadline, no limit on waiting', async () => {
    const owner = {};
    const slow = inTurn(owner, ['k'], async () => sleep(150));
    const next = await inTurn(owner, ['k'], async () => turnDeadline() ?? 'none');
    await slow;
    expect(next).toBe('none');
  });
});

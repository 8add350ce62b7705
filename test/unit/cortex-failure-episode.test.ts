import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { FailureEpisode, REPEAT_EVERY_MS } from '../../packages/server/src/cortex/failure-episode.ts';

/** A real pino logger writing its lines into an array, and a clock the test moves. */
const harness = () => {
  const lines: Array<{ level: number; msg: string; failures?: number; failing_ms?: number }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const clock = { now: 0 };
  const episode = new FailureEpisode(logger, 'cortex heartbeat failed', () => clock.now);
  return { lines, clock, episode };
};

describe('a loop failure said once an episode', () => {
  it('warns when failures start, once a minute while they last, and once when the loop works again', () => {
    const { lines, clock, episode } = harness();
    // An outage of three minutes, retried every second, as the heartbeat is.
    for (let second = 0; second < 180; second++) {
      clock.now = second * 1000;
      episode.failed(new Error('the database is unavailable'));
    }
    clock.now = 180_000;
    episode.worked();
    expect(lines.map((l) => l.msg)).toEqual([
      'cortex heartbeat failed; retrying',
      'cortex heartbeat failed; still failing, retrying',
      'cortex heartbeat failed; still failing, retrying',
      'cortex heartbeat failed: works again',
    ]);
    expect(lines[1]).toMatchObject({ level: 40, failures: 61, failing_ms: REPEAT_EVERY_MS });
    expect(lines[3]).toMatchObject({ level: 30, failures: 180, failing_ms: 180_000 });
  });

  it('says nothing while the loop works, and a new episode starts afresh', () => {
    const { lines, clock, episode } = harness();
    episode.worked();
    episode.worked();
    expect(lines).toEqual([]);
    episode.failed(new Error('one'));
    episode.worked();
    clock.now = 5_000;
    episode.failed(new Error('two'));
    expect(lines.map((l) => l.msg)).toEqual(['cortex heartbeat failed; retrying', 'cortex heartbeat failed: works again', 'cortex heartbeat failed; retrying']);
  });
});

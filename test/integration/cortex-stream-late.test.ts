import pino from 'pino';
import { expect, it } from 'vitest';
import { CortexFeed } from '../../packages/server/src/cortex/cortex-feed.ts';
import type { CortexEvent } from '../../packages/server/src/cortex/cortex-records.ts';
import { EventLog } from '../../packages/server/src/cortex/event-log.ts';
import type { RecordStore } from '../../packages/server/src/ports/records.ts';
import { useFsStore } from '../helpers/fs-store.ts';

/**
 * The cortex stream of a replica other than the worker's follows the worker's event log with a
 * short look-back window. Events queued behind a slow append (a backend answering slowly) were
 * stamped when queued, so they landed older than the window and were never streamed; they are
 * stamped when written.
 */
const fs = useFsStore('stream-late');

it('streams every event of the log, even those queued behind appends that took seconds', async () => {
  const store = fs.store();
  // The worker's record store answering each append in 0.8 s, within the stream's look-back:
  // four events queued at once are written over 3.2 s.
  const slow: RecordStore = new Proxy(store, {
    get(target, prop) {
      if (prop === 'createRecord') {
        return async (...args: Parameters<RecordStore['createRecord']>) => {
          await new Promise((resolve) => setTimeout(resolve, 800));
          return target.createRecord(...args);
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const feed = new CortexFeed(store, { poll: true, pollMs: 100, logger: pino({ level: 'silent' }) });
  const streamed: string[] = [];
  const stop = feed.subscribe('default', (event) => streamed.push((event as { scope: string }).scope));
  try {
    const log = new EventLog(slow, 'worker1', pino({ level: 'silent' }));
    for (const scope of ['path:a', 'path:b', 'path:c', 'path:d']) log.append({ type: 'digest_removed', namespace: 'default', scope } as CortexEvent);
    await log.flush();
    await expect.poll(() => streamed, { timeout: 5_000 }).toEqual(['path:a', 'path:b', 'path:c', 'path:d']);
  } finally {
    stop();
    feed.close();
  }
});

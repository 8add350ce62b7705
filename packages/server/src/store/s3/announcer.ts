import type { Logger } from 'pino';
import type { Entry } from '../../domain/entry.ts';
import type { ForgetTarget } from '../../ports/store.ts';
import { LocalChangeFeed } from '../local-change-feed.ts';
import { addressHash } from './object-keys.ts';

// Bounded: a duplicate (a change-log put retried under a new key after the first attempt
// did land) arrives within seconds of the original.
const MEMORY = 50_000;

/**
 * Publishes each version on the change feed once, whichever way this replica learns of it
 * first: its own append, or the change log. Versions are named by (address hash, number),
 * which is unique because versions are immutable.
 */
export class Announcer {
  readonly feed: LocalChangeFeed;
  private readonly announced = new Set<string>();

  constructor(logger: Logger) {
    this.feed = new LocalChangeFeed((error) => logger.error({ err: error }, 'change listener failed'));
  }

  /** Entries were forgotten: their version numbers may come again, as new versions. */
  forgotten(target: ForgetTarget, heads: readonly Entry[]): void {
    for (const head of heads) for (let v = 1; v <= head.version; v++) this.announced.delete(`${addressHash(head)}:${v}`);
    this.feed.publishForget(target);
  }

  announce(entry: Entry): void {
    const id = `${addressHash(entry)}:${entry.version}`;
    if (this.announced.has(id)) return;
    this.announced.add(id);
    if (this.announced.size > MEMORY) {
      const oldest = this.announced.values().next().value;
      if (oldest !== undefined) this.announced.delete(oldest);
    }
    this.feed.publish(entry);
  }
}

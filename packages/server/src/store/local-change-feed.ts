import type { Entry } from '../domain/entry.ts';
import type { ChangeFeed, ChangeListener } from '../ports/change-feed.ts';

/**
 * The in-process fan-out every backend uses to deliver changes to local subscribers. A
 * throwing listener is isolated so that one bad consumer cannot stop the others.
 */
export class LocalChangeFeed implements ChangeFeed {
  private readonly listeners = new Set<ChangeListener>();
  private readonly onListenerError: (error: unknown) => void;

  constructor(onListenerError: (error: unknown) => void = () => {}) {
    this.onListenerError = onListenerError;
  }

  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  publish(entry: Entry): void {
    for (const listener of this.listeners) {
      try {
        listener(entry);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }
}

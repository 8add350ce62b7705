import type { Entry } from '../domain/entry.ts';
import type { ChangeFeed, ChangeListener, ForgetListener } from '../ports/change-feed.ts';
import type { ForgetTarget } from '../ports/store.ts';

/**
 * The in-process fan-out every backend uses to deliver changes to local subscribers. A
 * throwing listener is isolated so that one bad consumer cannot stop the others.
 */
export class LocalChangeFeed implements ChangeFeed {
  private readonly listeners = new Set<ChangeListener>();
  private readonly forgetListeners = new Set<ForgetListener>();
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

  subscribeForgets(listener: ForgetListener): () => void {
    this.forgetListeners.add(listener);
    return () => {
      this.forgetListeners.delete(listener);
    };
  }

  publishForget(target: ForgetTarget): void {
    for (const listener of this.forgetListeners) {
      try {
        listener(target);
      } catch (error) {
        this.onListenerError(error);
      }
    }
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

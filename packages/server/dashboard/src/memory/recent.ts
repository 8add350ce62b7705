import type { Entry } from 'cairn-memory-client';
import type { LiveHub } from '../live.ts';
import { addressOf } from './address.ts';

export interface Arrival {
  entry: Entry;
  kind: 'new' | 'version';
  at: number;
}

/**
 * Entries that arrived over the stream since the dashboard opened and that the user has not
 * opened yet: what the Memory view marks as new. Kept for the whole session, so a write
 * that lands while another page is shown is still marked on return.
 */
export class Arrivals {
  private readonly unseen = new Map<string, Arrival>();
  private readonly listeners = new Set<() => void>();

  constructor(live: LiveHub) {
    live.onEntry((entry) => {
      const id = addressOf(entry);
      const before = this.unseen.get(id);
      this.unseen.set(id, { entry, kind: before?.kind === 'new' || entry.version === 1 ? 'new' : 'version', at: Date.now() });
      this.emit();
    });
  }

  get(id: string): Arrival | undefined {
    return this.unseen.get(id);
  }

  /** Unseen arrivals at or below each path that has any: one pass, for a whole tree at once. */
  countsByPath(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const a of this.unseen.values()) {
      let at = '';
      for (const segment of a.entry.entity_path.split('/')) {
        at = at ? `${at}/${segment}` : segment;
        counts.set(at, (counts.get(at) ?? 0) + 1);
      }
    }
    return counts;
  }

  seen(id: string): void {
    if (this.unseen.delete(id)) this.emit();
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }
}

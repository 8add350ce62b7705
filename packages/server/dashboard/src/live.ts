import type { Entry } from 'cairn-memory-client';
import { openStream, type StreamState } from './api/stream.ts';

type Listener = (entry: Entry) => void;

/**
 * The one live connection to /api/v1/stream, shared by every page: pages subscribe to entry
 * writes and to reconnects (after which they refetch, since the stream keeps no backlog).
 */
export class LiveHub {
  private readonly listeners = new Set<Listener>();
  private readonly reconnectListeners = new Set<() => void>();
  private readonly stateListeners = new Set<(state: StreamState) => void>();
  private stop: (() => void) | null = null;
  private wasLive = false;
  state: StreamState = 'closed';

  start(headers: Record<string, string>, onUnauthenticated: () => void): void {
    this.stop?.();
    this.stop = openStream('/api/v1/stream', headers, {
      onEvent: (event, data) => {
        if (event !== 'entry') return;
        const entry = JSON.parse(data) as Entry;
        for (const listener of this.listeners) listener(entry);
      },
      onState: (state) => {
        if (state === 'live' && this.wasLive) for (const listener of this.reconnectListeners) listener();
        if (state === 'live') this.wasLive = true;
        this.state = state;
        for (const listener of this.stateListeners) listener(state);
      },
      onUnauthenticated,
    });
  }

  close(): void {
    this.stop?.();
    this.stop = null;
  }

  onEntry(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  onState(listener: (state: StreamState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }
}

import { SseParserStream } from 'cairn-memory-client';

export type StreamState = 'connecting' | 'live' | 'retrying' | 'closed';

export interface StreamHandlers {
  onEvent(event: string, data: string): void;
  onState(state: StreamState): void;
  /** The key was refused: reconnecting would not help. */
  onUnauthenticated(): void;
}

const MAX_BACKOFF_MS = 15_000;

/**
 * A server-sent-events stream read with fetch, so the API key travels in a header: the
 * browser's EventSource cannot send headers, and a key in the URL would reach access logs.
 * Reconnects with backoff until closed; the caller refetches what it shows on reconnect,
 * since the server keeps no backlog to replay.
 */
export const openStream = (url: string, headers: Record<string, string>, handlers: StreamHandlers): (() => void) => {
  const controller = new AbortController();
  let backoff = 1000;
  let stopped = false;

  const connect = async (): Promise<void> => {
    handlers.onState('connecting');
    const res = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: controller.signal });
    if (res.status === 401) {
      stopped = true;
      handlers.onUnauthenticated();
      return;
    }
    if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
    handlers.onState('live');
    backoff = 1000;
    const events = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new SseParserStream()).getReader();
    for (;;) {
      const { value, done } = await events.read();
      if (done) return;
      handlers.onEvent(value.event, value.data);
    }
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        await connect();
      } catch {
        // Network error or server restart: fall through to the retry below.
      }
      if (stopped || controller.signal.aborted) break;
      handlers.onState('retrying');
      await new Promise((resolve) => setTimeout(resolve, backoff));
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
    handlers.onState('closed');
  };
  void loop();

  return () => {
    stopped = true;
    controller.abort();
  };
};

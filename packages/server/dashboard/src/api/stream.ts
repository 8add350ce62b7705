import { SseParserStream } from 'cairn-memory-client';

export type StreamState = 'connecting' | 'live' | 'retrying' | 'closed';

export interface StreamHandlers {
  onEvent(event: string, data: string): void;
  onState(state: StreamState): void;
  /** The key was refused: reconnecting would not help. */
  onUnauthenticated(): void;
}

const MAX_BACKOFF_MS = 15_000;

/** The server's keep-alive interval (CAIRN_SSE_KEEPALIVE_MS) by default, until one is heard. */
const DEFAULT_KEEPALIVE_MS = 15_000;
/** Silence for this many keep-alive intervals means the connection is dead. */
const SILENT_INTERVALS = 3;

/**
 * A server-sent-events stream read with fetch, so the API key travels in a header: the
 * browser's EventSource cannot send headers, and a key in the URL would reach access logs.
 * Reconnects with backoff until closed; the caller refetches what it shows on reconnect,
 * since the server keeps no backlog to replay.
 *
 * A connection can die without closing (a NAT or proxy dropping it quietly): the server sends
 * a keep-alive comment every interval, so when nothing at all arrives for SILENT_INTERVALS of
 * them the connection is dropped and another opened. The interval is learned from the gaps
 * between keep-alives heard (the server does not announce it); 15 s, the server's default, until then.
 */
export const openStream = (url: string, headers: Record<string, string>, handlers: StreamHandlers): (() => void) => {
  const controller = new AbortController();
  let backoff = 1000;
  let stopped = false;
  // The last few gaps between keep-alives heard; the interval taken is the longest of them, so
  // keep-alives read in a burst (after the page was busy) do not shorten it, and a long gap
  // (the computer slept) is forgotten after a few more.
  const gaps: number[] = [];
  const keepAliveMs = (): number => (gaps.length ? Math.max(...gaps) : DEFAULT_KEEPALIVE_MS);

  const connect = async (): Promise<void> => {
    handlers.onState('connecting');
    const connection = new AbortController();
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => connection.abort(), SILENT_INTERVALS * keepAliveMs());
    };
    try {
      arm();
      const res = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: AbortSignal.any([controller.signal, connection.signal]) });
      if (res.status === 401) {
        stopped = true;
        handlers.onUnauthenticated();
        return;
      }
      if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
      handlers.onState('live');
      backoff = 1000;
      arm();
      let lastKeepAlive = Date.now();
      // Every chunk read (events and keep-alives alike) proves the connection alive.
      const heard = new TransformStream<string, string>({
        transform(chunk, out) {
          arm();
          if (chunk.includes(': keep-alive')) {
            const now = Date.now();
            gaps.push(Math.max(now - lastKeepAlive, 100));
            if (gaps.length > 4) gaps.shift();
            lastKeepAlive = now;
            arm();
          }
          out.enqueue(chunk);
        },
      });
      const events = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(heard).pipeThrough(new SseParserStream()).getReader();
      for (;;) {
        const { value, done } = await events.read();
        if (done) return;
        handlers.onEvent(value.event, value.data);
      }
    } finally {
      clearTimeout(watchdog);
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

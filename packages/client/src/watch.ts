import type { Entry } from './api/entry.ts';
import { NetworkError, UnavailableError } from './errors.ts';
import type { HttpTransport } from './http.ts';
import { SseParserStream } from './sse.ts';

export interface WatchOptions {
  /** Only writes at or below this entity path. */
  entity_path?: string;
  /** The namespace to watch (default: the key's own). */
  namespace?: string;
  /** Stops the watch; the iteration then simply ends. */
  signal?: AbortSignal;
  /**
   * Reconnect when the stream drops or the server is briefly away (default true). Writes made
   * while disconnected are not replayed: re-list what matters after `onOpen` fires again.
   */
  reconnect?: boolean;
  /** Called each time the stream is connected, before any write it carries. */
  onOpen?: () => void;
}

const MAX_RECONNECT_MS = 30_000;

const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });

/**
 * Every entry write, live, from `/api/v1/stream` (SSE), as an async iterable. Leaving the
 * `for await` loop (or aborting `signal`) closes the connection.
 */
export async function* watchEntries(http: HttpTransport, options: WatchOptions = {}): AsyncGenerator<Entry, void, undefined> {
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  const reconnect = options.reconnect ?? true;
  let failures = 0;
  try {
    while (!signal.aborted) {
      let res: Response;
      try {
        res = await http.send('GET', '/api/v1/stream', { query: { entity_path: options.entity_path, namespace: options.namespace }, signal, stream: true });
      } catch (error) {
        if (signal.aborted) return;
        // A server that is down or restarting comes back; a refused key or bad path does not.
        if (!reconnect || !(error instanceof NetworkError || error instanceof UnavailableError)) throw error;
        await pause(Math.min(MAX_RECONNECT_MS, 500 * 2 ** failures++), signal);
        continue;
      }
      failures = 0;
      options.onOpen?.();
      try {
        if (res.body === null) throw new Error('the answer has no body');
        // A reader, not `for await`: not every browser's streams are async iterable (nor does the DOM library declare it).
        const events = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new SseParserStream()).getReader();
        try {
          for (let next = await events.read(); !next.done; next = await events.read()) {
            if (next.value.event === 'entry') yield JSON.parse(next.value.data) as Entry;
          }
        } finally {
          // Leaving early (break, abort) must close the connection, as `for await` would have.
          events.cancel().catch(() => {});
        }
      } catch (error) {
        if (signal.aborted) return;
        if (!reconnect) throw new NetworkError(`the event stream broke: ${(error as Error).message}`, { cause: error });
      }
      if (!reconnect) return;
      await pause(500, signal);
    }
  } finally {
    controller.abort();
  }
}

import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { Entry } from '../domain/entry.ts';
import { NetworkError, UnavailableError } from './errors.ts';
import type { HttpTransport } from './http.ts';

export interface WatchOptions {
  /** Only writes at or below this entity path. */
  entity_path?: string;
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
        res = await http.send('GET', '/api/v1/stream', { query: { entity_path: options.entity_path }, signal, stream: true });
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
        const events = (res.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
        for await (const event of events) {
          if (event.event === 'entry') yield JSON.parse(event.data) as Entry;
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

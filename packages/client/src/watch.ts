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
  /**
   * A connection over which nothing at all arrives for this long (not even the keep-alive
   * comments the server sends every CAIRN_SSE_KEEPALIVE_MS, 15 s by default) is taken for
   * lost, as a network partition or a middlebox that dropped the flow leaves it, and closed:
   * the watch reconnects as after a drop (or, with `reconnect: false`, fails with a
   * NetworkError). It bounds the wait for the stream's answer when connecting too. Default
   * 45 s, three keep-alive intervals; 0 waits forever. Set it to about three times the server's
   * CAIRN_SSE_KEEPALIVE_MS if that is changed.
   */
  idleTimeoutMs?: number;
}

const MAX_RECONNECT_MS = 30_000;
const IDLE_TIMEOUT_MS = 45_000;

/**
 * A watchdog for one connection: its signal aborts once `ms` pass without a `touch()`
 * (a chunk of the stream, or the answer's arrival); never when `ms` is 0.
 */
const watchdog = (ms: number) => {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const touch = (): void => {
    if (ms <= 0 || controller.signal.aborted) return;
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error(`nothing arrived on the event stream for ${ms} ms`)), ms);
  };
  touch();
  return { signal: controller.signal, touch, stop: () => clearTimeout(timer) };
};

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
  const idleMs = options.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  if (typeof idleMs !== 'number' || !(idleMs >= 0)) throw new TypeError(`idleTimeoutMs must be a number of milliseconds ≥ 0, not ${String(idleMs)}`);
  let failures = 0;
  try {
    while (!signal.aborted) {
      // Each connection's own watchdog: a silent one is closed, and this loop reconnects.
      const idle = watchdog(idleMs);
      const connection = AbortSignal.any([signal, idle.signal]);
      try {
        let res: Response;
        try {
          res = await http.send('GET', '/api/v1/stream', { query: { entity_path: options.entity_path, namespace: options.namespace }, signal: connection, stream: true });
        } catch (error) {
          if (signal.aborted) return;
          const silent = idle.signal.aborted;
          // A server that is down, restarting or not answering comes back; a refused key or bad path does not.
          if (!reconnect || !(silent || error instanceof NetworkError || error instanceof UnavailableError)) {
            throw silent ? new NetworkError(`no answer from the event stream within ${idleMs} ms`, { cause: idle.signal.reason }) : error;
          }
          idle.stop();
          await pause(Math.min(MAX_RECONNECT_MS, 500 * 2 ** failures++), signal);
          continue;
        }
        idle.touch();
        failures = 0;
        options.onOpen?.();
        try {
          if (res.body === null) throw new Error('the answer has no body');
          // Every chunk counts as a sign of life, keep-alive comments included.
          const alive = new TransformStream<string, string>({
            transform(chunk, out) {
              idle.touch();
              out.enqueue(chunk);
            },
          });
          // A reader, not `for await`: not every browser's streams are async iterable (nor does the DOM library declare it).
          const events = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(alive).pipeThrough(new SseParserStream()).getReader();
          // The watchdog firing cancels the reader: a body whose connection went silent may never fail on its own.
          const onSilent = (): void => void events.cancel(idle.signal.reason).catch(() => {});
          idle.signal.addEventListener('abort', onSilent, { once: true });
          try {
            for (let next = await events.read(); !next.done; next = await events.read()) {
              if (next.value.event === 'entry') yield JSON.parse(next.value.data) as Entry;
            }
          } finally {
            idle.signal.removeEventListener('abort', onSilent);
            // Leaving early (break, abort) must close the connection, as `for await` would have.
            events.cancel().catch(() => {});
          }
          if (idle.signal.aborted) throw idle.signal.reason;
        } catch (error) {
          if (signal.aborted) return;
          if (!reconnect) throw new NetworkError(`the event stream broke: ${(error as Error).message}`, { cause: error });
        }
      } finally {
        idle.stop();
      }
      if (!reconnect) return;
      await pause(500, signal);
    }
  } finally {
    controller.abort();
  }
}

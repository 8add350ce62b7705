import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { Config } from '../config.ts';
import { ServiceError } from '../domain/errors.ts';

/** How often an open stream asks whether its key is still admitted. */
export const KEY_RECHECK_MS = 500;

/**
 * A client that stops reading is cut off past this much unsent data; it can reconnect. Each
 * open stream may make the server hold this much (with CAIRN_MAX_STREAMS open: 1 GiB at most);
 * at 8 MiB, 100 stalled readers and a burst of writes took 840 MB.
 */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

/**
 * The event streams open on this server, entry and Cortex streams together: at most
 * `maxStreamsPerKey` per key (429 past it) and `maxStreams` in all (503). Streams take no
 * request slot (request-hooks.ts), so without these a client could hold any number open.
 */
export class StreamSlots {
  private total = 0;
  private readonly perKey = new Map<string, number>();
  private readonly maxStreams: number;
  private readonly maxPerKey: number;
  constructor(maxStreams: number, maxPerKey: number) {
    this.maxStreams = maxStreams;
    this.maxPerKey = maxPerKey;
  }

  /**
   * Take a slot for the caller's managed key `key`, or throw 429/503. Static keys
   * (CAIRN_API_KEYS: `static`) and open access (null) are shared by whoever holds them, a team's
   * dashboards and agents alike: they are held to the server's cap alone.
   */
  take(keyId: string | null): () => void {
    const key = keyId === null || keyId === 'static' ? null : keyId;
    const held = key === null ? 0 : (this.perKey.get(key) ?? 0);
    if (key !== null && held >= this.maxPerKey) {
      throw new ServiceError('RATE_LIMITED', `this key already has ${held} event streams open (CAIRN_MAX_STREAMS_PER_KEY); close one, or retry later`, { retryAfter: 5 });
    }
    if (this.total >= this.maxStreams) {
      throw new ServiceError('UNAVAILABLE', `this server has ${this.total} event streams open (CAIRN_MAX_STREAMS); retry later`, { retryAfter: 5 });
    }
    this.total++;
    if (key !== null) this.perKey.set(key, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total--;
      if (key === null) return;
      const left = (this.perKey.get(key) ?? 1) - 1;
      if (left <= 0) this.perKey.delete(key);
      else this.perKey.set(key, left);
    };
  }
}

/** One StreamSlots per server (per config object): the entry and Cortex stream routes share it. */
const slotsByConfig = new WeakMap<object, StreamSlots>();
export const streamSlots = (config: Readonly<Config>): StreamSlots => {
  let slots = slotsByConfig.get(config);
  if (!slots) slotsByConfig.set(config, (slots = new StreamSlots(config.maxStreams, config.maxStreamsPerKey)));
  return slots;
};

/** The headers an event stream is answered with. */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/**
 * The answer to HEAD on an event stream: the stream's status and headers, ended at once, with
 * no slot taken. Fastify's HEAD runs the GET handler, which took a slot and held it open with
 * nothing written (Node sends no body on HEAD), so HEADs alone used up a key's streams.
 */
export const answerStreamHead = (reply: FastifyReply): FastifyReply => {
  const { connection: _, ...headers } = SSE_HEADERS;
  return reply.status(200).headers(headers).send();
};

/** The `data:` lines of an event's data: one per line of its JSON, so no payload can break a frame. */
const dataLinesOf = (data: unknown): string => JSON.stringify(data).split('\n').map((line) => `data: ${line}`).join('\n');

/**
 * The same for an entry, made once for every stream it goes to. A write reaches every open
 * stream in one turn, each sent the same entry object, which never changes (a new version is a
 * new object): 300 streams and an entry of 500 KiB made 150 MB of JSON per write, serialised once
 * per stream. Only the last entry's lines are kept.
 */
let lastEntry: object | null = null;
let lastEntryLines = '';
const entryLinesOf = (entry: object): string => {
  if (entry !== lastEntry) {
    lastEntryLines = dataLinesOf(entry);
    lastEntry = entry;
  }
  return lastEntryLines;
};

/**
 * One server-sent-events connection: the framing (a `data:` line per line of payload, so
 * no payload can break a frame), a keep-alive comment, and a bound on what a slow client
 * can make the server hold.
 */
export class SseConnection {
  private readonly res: ServerResponse;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private readonly onClose: () => void;

  constructor(res: ServerResponse, keepAliveMs: number, onClose: () => void) {
    this.res = res;
    this.onClose = onClose;
    res.writeHead(200, SSE_HEADERS);
    res.write('retry: 3000\n\n');
    this.timer = setInterval(() => this.write(': keep-alive\n\n'), keepAliveMs);
    res.on('close', () => this.close());
  }

  /**
   * Close the stream once `admitted` says no, asking every `everyMs`: a key revoked while its
   * stream is open stops receiving (KeyResolver answers within KEY_CACHE_MS of a revocation).
   */
  watch(admitted: () => Promise<boolean>, everyMs: number): void {
    const timer = setInterval(() => {
      if (this.closed) return clearInterval(timer);
      admitted().then(
        (yes) => {
          if (!yes) this.close();
        },
        // Not knowing is not a no: the next turn asks again.
        () => {},
      );
    }, everyMs);
    timer.unref();
    this.res.on('close', () => clearInterval(timer));
  }

  send(event: string, data: unknown, id?: string): void {
    this.frame(event, dataLinesOf(data), id);
  }

  /** An entry (immutable: a new version is a new object), serialised once for every stream it goes to. */
  sendEntry(event: string, entry: object, id?: string): void {
    this.frame(event, entryLinesOf(entry), id);
  }

  private frame(event: string, lines: string, id: string | undefined): void {
    const idLine = id === undefined ? '' : `id: ${id.replace(/[\r\n]/g, '')}\n`;
    this.write(`${idLine}event: ${event}\n${lines}\n\n`);
  }

  private write(frame: string): void {
    if (this.closed) return;
    if (this.res.writableLength > MAX_BUFFERED_BYTES) {
      this.close(true);
      return;
    }
    this.res.write(frame);
  }

  /**
   * End the stream. `cut`: the client stopped reading, so its connection is destroyed with what
   * is unsent; ended, the response would hold those megabytes, and count as a request in
   * flight, for as long as the client kept the connection open without reading.
   */
  close(cut = false): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.onClose();
    if (cut) this.res.destroy();
    else this.res.end();
  }
}

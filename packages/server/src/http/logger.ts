import { write as writeAsync, writeSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { redactCredentials } from '../domain/redact-credentials.ts';
import pino, { type Logger } from 'pino';

/**
 * Query parameters that may carry secrets, by their decoded name: any that names a key, token,
 * secret, auth, password or signature (`api_key`, `api_key[]`, `apikey`, `access_token`,
 * `key`, `x-cairn-api-key`, `X-Signature`…), not the exact names alone, so a misspelt key
 * parameter is not logged with its key.
 */
const SECRET_NAME = /key|token|secret|auth|passw|signature/i;
/** ...except an id, which names a key without being one (`key_id` in the audit log's filters). */
const ID_NAME = /[_-]id$/i;

/** A managed key (key-records.ts: `ck_<id>_<secret>`) wherever it appears: its id is kept. */
const MANAGED_KEY = /(ck_[0-9a-f]{12}_)[A-Za-z0-9_-]+/gi;
const MANAGED_KEY_ENCODED = /(ck(?:_|%5f)[0-9a-f]{12}(?:_|%5f))(?:[A-Za-z0-9_-]|%[0-9a-f]{2})+/gi;

/** A query parameter's name as the query parser reads it: percent-decoded, "+" a space. */
const decoded = (text: string): string => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
};

const redactParam = (param: string): string => {
  const eq = param.indexOf('=');
  const name = decoded(eq < 0 ? param : param.slice(0, eq));
  // A name that swallowed its value (`?api_key%3D<key>`, an encoded "=") is cut at the "=".
  const cut = name.indexOf('=');
  const shown = cut < 0 ? name : name.slice(0, cut);
  if (!SECRET_NAME.test(shown) || ID_NAME.test(shown)) return param;
  return `${shown}=[redacted]`;
};

/**
 * The URL with the value of every secret parameter replaced, its name kept, and every managed
 * key masked wherever it appears (a path, a parameter of another name). Names are judged as the
 * query parser decodes them: `?api%5Fkey=` is the `api_key` the webhook routes accept.
 */
export const redactUrl = (url: string | undefined): string | undefined => {
  if (url === undefined) return url;
  const start = url.indexOf('?');
  let out = url;
  if (start >= 0) {
    const hash = url.indexOf('#', start);
    const end = hash < 0 ? url.length : hash;
    // `;` separates parameters too for some parsers and proxies: a key after one is redacted as well.
    const query = url.slice(start + 1, end).split('&').map((part) => part.split(';').map(redactParam).join(';')).join('&');
    out = `${url.slice(0, start + 1)}${query}${url.slice(end)}`;
  }
  return out.replace(MANAGED_KEY_ENCODED, '$1[redacted]').replace(MANAGED_KEY, '$1[redacted]');
};

/** Fields Node's errors carry that repeat their input verbatim (ERR_INVALID_URL's `input`). */
const INPUT_FIELDS = new Set(['input', 'base']);

const scrub = (value: unknown, depth: number): unknown => {
  if (typeof value === 'string') return redactCredentials(value);
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
  return Object.fromEntries(Object.entries(value).filter(([key]) => !INPUT_FIELDS.has(key)).map(([key, item]) => [key, scrub(item, depth + 1)]));
};

/**
 * An error as a log line holds it (pino's serializer), without what may carry a secret: an
 * invalid URL's `input` (a connection string with its password) is dropped, and URL
 * credentials in the message, the stack or any other field are masked.
 */
export const serializeError = (error: unknown): unknown => (error instanceof Error ? scrub(pino.stdSerializers.err(error), 0) : error);

/** Log bytes held for a slow or failing stdout before new lines are dropped. */
const MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** How long a write that would block (EAGAIN) waits before it is tried again. */
const RETRY_MS = 20;
/** How long the last flush at exit may wait on a stdout that would block, all told. */
const EXIT_FLUSH_MS = 1_000;

/** Log lines dropped since start because their destination could not take them. */
let dropped = 0;
export const droppedLogLines = (): number => dropped;

const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/**
 * Log lines written to a file descriptor without blocking the server, and never at its
 * expense: a line the descriptor cannot take (a full disk: ENOSPC, a closed pipe: EPIPE) is
 * dropped and counted, not retried for ever nor thrown, and at most MAX_QUEUED_BYTES wait
 * behind a slow one. At exit, what is queued is written once, synchronously, within
 * EXIT_FLUSH_MS (pino's own destination retries a failing write there for ever, and an
 * unhandled write error kills the process).
 */
export class LogDestination {
  private queue: string[] = [];
  private queuedBytes = 0;
  private writing = false;
  private waiters: ((error?: Error) => void)[] = [];
  /** Set while writes fail, so that the failure is said once (on stderr) per run of failures. */
  private failing = false;

  private readonly fd: number;

  constructor(fd: number) {
    this.fd = fd;
    process.on('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    if (this.queuedBytes + line.length > MAX_QUEUED_BYTES) {
      dropped += 1;
      return false;
    }
    this.queue.push(line);
    this.queuedBytes += line.length;
    if (!this.writing) this.next();
    return true;
  }

  /** Calls back once what is queued now is written (or dropped). */
  flush(cb: (error?: Error) => void = () => {}): void {
    if (!this.writing && this.queue.length === 0) {
      cb();
      return;
    }
    this.waiters.push(cb);
  }

  private next(): void {
    if (this.queue.length === 0) {
      this.writing = false;
      for (const waiter of this.waiters.splice(0)) waiter();
      return;
    }
    this.writing = true;
    const lines = this.queue.length;
    const chunk = Buffer.from(this.queue.join(''));
    this.queue = [];
    this.queuedBytes = 0;
    this.send(chunk, 0, lines);
  }

  private send(chunk: Buffer, from: number, lines: number): void {
    writeAsync(this.fd, chunk, from, chunk.length - from, null, (error, written) => {
      if (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EBUSY') {
          setTimeout(() => this.send(chunk, from, lines), RETRY_MS);
          return;
        }
        this.drop(lines, error);
        this.next();
        return;
      }
      this.failing = false;
      if (from + written < chunk.length) this.send(chunk, from + written, lines);
      else this.next();
    });
  }

  private drop(lines: number, error: Error): void {
    dropped += lines;
    if (this.failing) return;
    this.failing = true;
    try {
      writeSync(2, `cairn: log lines dropped, their destination cannot take them: ${error.message}\n`);
    } catch {
      // stderr cannot either.
    }
  }

  /** What is queued, written now in one go: for the exit, when no callback will run again. */
  flushSync(): void {
    const lines = this.queue.length;
    if (lines === 0) return;
    const chunk = Buffer.from(this.queue.join(''));
    this.queue = [];
    this.queuedBytes = 0;
    const until = Date.now() + EXIT_FLUSH_MS;
    let at = 0;
    while (at < chunk.length) {
      try {
        at += writeSync(this.fd, chunk, at);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if ((code === 'EAGAIN' || code === 'EBUSY') && Date.now() < until) {
          sleepSync(RETRY_MS);
          continue;
        }
        this.drop(lines, error as Error);
        return;
      }
    }
  }
}

/**
 * The process logger: JSON lines (pino), with secrets kept out. Every request's lines carry
 * its `request_id` (set by the HTTP app on the child logger).
 */
export const createLogger = (level: string, destination?: pino.DestinationStream): Logger =>
  pino(
    {
      level,
      base: { service: 'cairn' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['req.headers.authorization', 'req.headers["x-cairn-api-key"]', 'headers.authorization', 'headers["x-cairn-api-key"]'],
        censor: '[redacted]',
      },
      serializers: {
        err: serializeError,
        req: (req: IncomingMessage) => ({ method: req.method, url: redactUrl(req.url) }),
      },
    },
    // Asynchronous writes: a synchronous write per line costs more than the request it logs.
    // The CLI flushes before exiting, so shutdown and fatal lines are not lost; a stdout that
    // fails (a full disk) loses lines, never the server (LogDestination).
    destination ?? new LogDestination(1),
  );

import { CLIENT_VERSION } from './version.ts';
import { InternalServerError, NetworkError, errorFromResponse } from './errors.ts';

export interface ClientOptions {
  /** Where Cairn listens, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Sent as `X-Cairn-API-Key`; omit for a server in open mode. */
  apiKey?: string;
  /** Sent as `X-Cairn-Agent-Id`: the writer identity when a write names none. */
  agentId?: string;
  /**
   * Retries after a 429 or 503 (or a refused connection); default 3. A write answered 503 with
   * its outcome unknown (`CairnError.outcomeUnknown`) is never resent, nor is a request that
   * met damaged stored data (`CairnError.storedDataDamaged`).
   */
  retries?: number;
  /**
   * Backoff ceiling of the first retry when the server gives no Retry-After; doubles each retry.
   * Each wait is drawn between half the ceiling and the ceiling, so clients that failed
   * together do not retry together. Default 250 ms.
   */
  retryBaseMs?: number;
  /** Longest wait before a retry; a Retry-After beyond it is not waited for. Default 30 s. */
  maxRetryDelayMs?: number;
  /** Per attempt; default 30 s. */
  timeoutMs?: number;
  /** For tests and custom agents; default the global fetch. */
  fetch?: typeof fetch;
  /**
   * Aborting it aborts every request of this client, and any retry it is waiting to make. For
   * some calls only: `client.withOptions({ signal })`.
   */
  signal?: AbortSignal;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  signal?: AbortSignal;
  /** No overall timeout (event streams stay open). */
  stream?: boolean;
}

/** Seconds from a Retry-After header: delta-seconds or an HTTP date. */
export const parseRetryAfter = (value: string | null, now = Date.now()): number | undefined => {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
};

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** One signal that aborts when any of the given ones does; undefined when none is given. */
const anyOf = (...signals: (AbortSignal | undefined)[]): AbortSignal | undefined => {
  const given = signals.filter((s): s is AbortSignal => s !== undefined);
  return given.length <= 1 ? given[0] : AbortSignal.any(given);
};

/** `ECONNREFUSED` means the request never reached a server, so even a write is safe to resend. */
const refused = (error: unknown): boolean => (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';

/**
 * When `url` holds user info (`http://user:secret@host`), the address with it redacted
 * (`http://***@host/`) for a message; undefined when it holds none or is not a URL.
 */
export const userInfoOf = (url: string): string | undefined => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.username === '' && parsed.password === '') return undefined;
  parsed.username = '';
  parsed.password = '';
  return parsed.href.replace('//', '//***@');
};

/**
 * Throws a TypeError saying `expected` and what `value` is instead, unless it is a plain
 * object: callers from JavaScript, where nothing checked the types, pass strings and arrays.
 */
export const requireObject = (value: unknown, expected: string): void => {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return;
  throw new TypeError(`${expected}, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}`);
};

/**
 * The HTTP layer of the client: headers, JSON, typed errors, and retries with backoff. It
 * retries what the server says is worth retrying (429, 503), never sooner than its
 * Retry-After, and a connection that was refused outright.
 */
export class HttpTransport {
  private readonly base: string;
  private readonly options: ClientOptions;
  private readonly fetch: typeof fetch;

  constructor(options: ClientOptions) {
    // Called from JavaScript too, where nothing checked the types: `new CairnClient(url)` said
    // "cannot read properties of undefined (reading 'replace')".
    if (typeof options !== 'object' || options === null || typeof options.url !== 'string') {
      throw new TypeError("CairnClient takes options such as { url: 'http://127.0.0.1:8080', apiKey }");
    }
    // Credentials in the address are not how Cairn authenticates (fetch refuses such a URL, and
    // its message would carry them): the key goes in `apiKey`. Refused, without echoing them.
    const credentials = userInfoOf(options.url);
    if (credentials !== undefined) {
      throw new TypeError(`CairnClient's url must not hold a user name or password (${credentials}); pass the API key as apiKey`);
    }
    // A key travels as a header, which carries visible ASCII alone: any other character failed
    // each request as a NetworkError ("cannot reach Cairn") whose message held the whole key.
    // Refused here, without echoing it.
    if (options.apiKey !== undefined && (typeof options.apiKey !== 'string' || !/^[\x21-\x7e]*$/.test(options.apiKey))) {
      throw new TypeError(
        "CairnClient's apiKey must be the key alone, visible ASCII characters: this one holds a space, a line break or a character outside ASCII (a placeholder pasted as it is, or several lines of output)",
      );
    }
    this.base = options.url.replace(/\/+$/, '');
    this.options = options;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** Send a request and answer the raw Response of a 2xx, retrying 429/503; else throw the typed error. */
  async send(method: string, path: string, request: RequestOptions = {}): Promise<Response> {
    // Every request body is an object: a string given from JavaScript (`search('latency')`)
    // would be sent as a JSON string, and refused by the server with a less helpful message.
    if (request.body !== undefined) requireObject(request.body, "the request body must be an object, such as { query: 'checkout latency' }");
    const retries = this.options.retries ?? 3;
    const signal = anyOf(this.options.signal, request.signal);
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetch(this.urlOf(path, request.query), this.init(method, request, signal));
      } catch (error) {
        if (signal?.aborted) throw error;
        // The timeout aborts a request the server may well have received: "cannot reach" would
        // send a reader looking for a network fault.
        const timedOut = (error as Error).name === 'TimeoutError';
        const reason = (error as { cause?: Error }).cause?.message ?? (error as Error).message;
        const network = timedOut
          ? new NetworkError(`no answer from Cairn at ${this.base} within ${this.options.timeoutMs ?? 30_000} ms`, { cause: error })
          : new NetworkError(`cannot reach Cairn at ${this.base}: ${reason}`, { cause: error });
        if (!refused(error) || attempt >= retries) throw network;
        await sleep(this.delay(attempt, undefined) ?? 0, signal);
        continue;
      }
      if (res.ok) return res;
      const body: unknown = await res.json().catch(() => null);
      const failure = errorFromResponse(res.status, body, parseRetryAfter(res.headers.get('retry-after')), res.headers.get('x-request-id') ?? undefined);
      // A write whose outcome the server does not know may have been stored: resending it could
      // store it twice (an outcome counted twice, a compare-and-set refused by its own write).
      // Damaged stored data answers the same however often it is asked.
      const resendable = !(failure.outcomeUnknown && method !== 'GET' && method !== 'HEAD') && !failure.storedDataDamaged;
      const wait = (res.status === 429 || res.status === 503) && resendable ? this.delay(attempt, failure.retryAfter) : null;
      if (wait === null || attempt >= retries) throw failure;
      await sleep(wait, signal);
    }
  }

  /** `send` and decode the JSON answer (undefined for 204). */
  async json<T>(method: string, path: string, request: RequestOptions = {}): Promise<T> {
    const res = await this.send(method, path, request);
    if (res.status === 204) return undefined as T;
    try {
      return (await res.json()) as T;
    } catch (error) {
      // A 2xx that is not JSON came from something in front of Cairn (a proxy's page): an error
      // of the client's kinds, with the status and request id, rather than a bare SyntaxError.
      throw new InternalServerError(`the answer to ${method} ${path} (HTTP ${res.status}) is not JSON: not Cairn's, perhaps a proxy's`, {
        status: res.status,
        requestId: res.headers.get('x-request-id') ?? undefined,
        cause: error,
      });
    }
  }

  /** Milliseconds before the next attempt, or null when the server asked for longer than we wait. */
  private delay(attempt: number, retryAfter: number | undefined): number | null {
    const max = this.options.maxRetryDelayMs ?? 30_000;
    if (retryAfter !== undefined) return retryAfter * 1000 <= max ? retryAfter * 1000 : null;
    // Exponential with jitter, so clients that failed together do not retry together.
    const ceiling = Math.min(max, (this.options.retryBaseMs ?? 250) * 2 ** attempt);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private urlOf(path: string, query: RequestOptions['query']): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${this.base}${path}${qs ? `?${qs}` : ''}`;
  }

  private init(method: string, request: RequestOptions, signal: AbortSignal | undefined): RequestInit {
    const headers: Record<string, string> = { accept: request.stream ? 'text/event-stream' : 'application/json', 'user-agent': `cairn-client/${CLIENT_VERSION}` };
    if (this.options.apiKey) headers['x-cairn-api-key'] = this.options.apiKey;
    if (this.options.agentId) headers['x-cairn-agent-id'] = this.options.agentId;
    const init: RequestInit = { method, headers };
    if (request.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(request.body);
    }
    const attemptSignal = anyOf(signal, request.stream ? undefined : AbortSignal.timeout(this.options.timeoutMs ?? 30_000));
    if (attemptSignal) init.signal = attemptSignal;
    return init;
  }
}

import { createHash } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { parseError } from './s3-xml.ts';
import { type Credentials, type SignInput, UNSIGNED_PAYLOAD, s3Signer, sha256Hex, uriEncode } from './sigv4.ts';

/**
 * Cairn's S3 client: HTTP requests on a keep-alive agent, signed by the AWS SDK's signer
 * (sigv4.ts), with the timeouts and the single retry the store is built around. It replaced
 * the AWS SDK's S3 client, whose middleware stack and schema-driven serialisation cost more CPU
 * than the request itself on this store's small objects (a PUT 1.74 ms of the client's CPU
 * against 0.73 here, a HEAD 1.57 against 0.59; s3rver, 500 requests one at a time, warm).
 * Credentials still come from the SDK's default provider chain (credentials.ts): environment,
 * shared files, SSO, web identity, container and instance roles.
 */

export interface S3HttpOptions {
  region: string;
  /** An S3-compatible server (s3rver, MinIO …): addressed path-style (`/bucket/key`). */
  endpoint?: string | undefined;
  credentials: () => Promise<Credentials>;
  /** This host's clock (a test sets one that is off). */
  now?: () => number;
}

export type S3Body = string | Buffer | { length: number; stream: () => Readable };

export interface S3Request {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';
  bucket: string;
  /** The object's key; none for a request on the bucket (a listing, a batch delete, a check). */
  key?: string;
  query?: ReadonlyArray<readonly [string, string]>;
  /** Lower-case names. */
  headers?: Record<string, string>;
  body?: S3Body;
  /** The whole attempt's deadline, from sending to the answer's last byte (default REQUEST_TIMEOUT_MS). */
  timeoutMs?: number;
}

export interface S3Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

// Small timeouts and a single retry: when the bucket is unreachable a request must fail in
// about a second (so the API answers 503 quickly), not hang. The change-log lookback window
// (change-follower.ts) is sized from these: a change object can land at most ~2 × the request
// timeout after the timestamp in its key.
const REQUEST_TIMEOUT_MS = 3000;
const CONNECTION_TIMEOUT_MS = 1000;
const MAX_ATTEMPTS = 2;
/** The name of the error of a connection not made in time (which proves the request was not sent). */
export const CONNECT_TIMEOUT = 'ConnectTimeoutError';
/** The name of the error of credentials that could not be found (nothing was sent either). */
export const NO_CREDENTIALS = 'CredentialsError';
/** The wait before the retry: a random part of this, so that replicas failing together do not retry together. */
const RETRY_DELAY_MS = 100;

/**
 * A failed request: S3's answer (its status and error code as `name`) or the connection's
 * failure (its errno as `code`, `TimeoutError` for a deadline). `attempts` holds every
 * attempt's error, the last being this one: a write whose first attempt may have been carried
 * out before its answer was lost is told by them (bucket-objects.ts, create).
 */
export class S3Error extends Error {
  readonly status: number | undefined;
  readonly code: string | undefined;
  attempts: S3Error[] = [this];
  /** Refused for a signature dated by a clock the client has since corrected (S3Http.followClock): worth another attempt. */
  clockSkewed = false;

  constructor(name: string, message: string, options: { status?: number; code?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = name;
    this.status = options.status;
    this.code = options.code;
  }
}

const EMPTY_HASH = sha256Hex('');

const RETRYABLE_CODES = new Set(['RequestTimeout', 'SlowDown', 'Throttling', 'ThrottlingException', 'InternalError', 'ServiceUnavailable']);

/** Whether another attempt may succeed: the connection failed, S3 failed (5xx) or asked to slow down. */
const retryable = (error: S3Error): boolean =>
  error.status === undefined || error.status >= 500 || error.status === 429 || RETRYABLE_CODES.has(error.name);

/**
 * How far the bucket's clock (its answers' Date header) may be from ours before requests are
 * signed by its clock instead: S3 refuses a signature dated more than 15 minutes off its own
 * (RequestTimeTooSkewed; 403 with no code to a HEAD). As the SDK's client did.
 */
const CLOCK_SKEW_MS = 5 * 60_000;

const NO_BODY_NAMES: Record<number, string> = { 301: 'PermanentRedirect', 400: 'BadRequest', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 409: 'Conflict', 412: 'PreconditionFailed', 501: 'NotImplemented', 503: 'ServiceUnavailable' };

const answerError = (response: S3Response, method: string): S3Error => {
  const { code, message } = method === 'HEAD' ? {} : parseError(response.body.toString('utf8'));
  const name = code ?? NO_BODY_NAMES[response.status] ?? `Http${response.status}`;
  return new S3Error(name, message ?? `S3 answered ${response.status}`, { status: response.status });
};

/**
 * Where a request on `bucket` (and `key`) goes: the server, the Host header and the path, each
 * segment of the key percent-encoded. An endpoint of its own (s3rver, MinIO) is addressed
 * path-style, under the endpoint's own path if it has one; AWS with the bucket in the host name,
 * unless the name has dots (TLS certificates cover one level of *.s3.<region>.amazonaws.com),
 * then path-style.
 */
export const s3Target = (endpoint: URL | null, region: string, bucket: string, key: string | undefined): { base: URL; host: string; path: string } => {
  const keyPath = key === undefined ? '' : `/${key.split('/').map(uriEncode).join('/')}`;
  if (endpoint) return { base: endpoint, host: endpoint.host, path: `${endpoint.pathname.replace(/\/+$/, '')}/${bucket}${keyPath}` };
  if (bucket.includes('.')) {
    const host = `s3.${region}.amazonaws.com`;
    return { base: new URL(`https://${host}`), host, path: `/${bucket}${keyPath}` };
  }
  const host = `${bucket}.s3.${region}.amazonaws.com`;
  return { base: new URL(`https://${host}`), host, path: keyPath || '/' };
};

export class S3Http {
  private readonly region: string;
  private readonly endpoint: URL | null;
  private readonly agent: http.Agent;
  private readonly sign: (input: SignInput) => Promise<Record<string, string>>;
  /** Added to our clock to sign: the bucket's clock less ours, once they were found apart (CLOCK_SKEW_MS). */
  private clockOffsetMs = 0;
  private readonly now: () => number;

  constructor(options: S3HttpOptions) {
    this.region = options.region;
    this.endpoint = options.endpoint ? new URL(options.endpoint) : null;
    this.sign = s3Signer(options.region, options.credentials);
    this.now = options.now ?? Date.now;
    const secure = this.endpoint ? this.endpoint.protocol === 'https:' : true;
    this.agent = secure ? new https.Agent({ keepAlive: true, maxSockets: 64 }) : new http.Agent({ keepAlive: true, maxSockets: 64 });
  }

  /** Sends `request`, once more after a failure another attempt may mend; throws S3Error for any answer outside 2xx. */
  async send(request: S3Request): Promise<S3Response> {
    const attempts: S3Error[] = [];
    for (;;) {
      try {
        const response = await this.attempt(request);
        if (response.status < 300) return response;
        const error = answerError(response, request.method);
        // A refusal because our clock is off is mended by signing with the bucket's: once more.
        if (response.status === 403 && this.followClock(response.headers.date)) error.clockSkewed = true;
        throw error;
      } catch (caught) {
        const error = caught instanceof S3Error ? caught : new S3Error('Error', String(caught), { cause: caught });
        attempts.push(error);
        error.attempts = attempts;
        if (attempts.length >= MAX_ATTEMPTS || !(retryable(error) || error.clockSkewed)) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * RETRY_DELAY_MS));
      }
    }
  }

  /** Signs by the bucket's clock from now on when `date` (an answer's Date header) is CLOCK_SKEW_MS or more from ours; says whether it changed. */
  private followClock(date: string | undefined): boolean {
    const theirs = date === undefined ? Number.NaN : Date.parse(date);
    if (Number.isNaN(theirs) || Math.abs(theirs - (this.now() + this.clockOffsetMs)) < CLOCK_SKEW_MS) return false;
    this.clockOffsetMs = theirs - this.now();
    return true;
  }

  /** Closes the idle connections; requests in flight end as they will. */
  destroy(): void {
    this.agent.destroy();
  }

  private async attempt(request: S3Request): Promise<S3Response> {
    const { base, host, path } = s3Target(this.endpoint, this.region, request.bucket, request.key);
    const body = request.body;
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.isBuffer(body) ? body : null;
    const headers: Record<string, string> = { host, ...request.headers };
    if (body !== undefined) headers['content-length'] = String(bytes ? bytes.length : (body as { length: number }).length);
    if (request.method === 'POST' && bytes) headers['content-md5'] = createHash('md5').update(bytes).digest('base64');
    const query = request.query ?? [];
    const signed = await this.sign({
      method: request.method,
      path,
      query,
      headers,
      // A streamed body (a saved index, megabytes) is not read twice to be hashed.
      payloadHash: bytes ? sha256Hex(bytes) : body === undefined ? EMPTY_HASH : UNSIGNED_PAYLOAD,
      now: new Date(this.now() + this.clockOffsetMs),
    }).catch((error: unknown) => {
      // The credentials could not be had (signing itself does not fail otherwise).
      throw new S3Error(NO_CREDENTIALS, `no AWS credentials: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    });
    const search = query.length ? `?${query.map(([name, value]) => (value === '' ? uriEncode(name) : `${uriEncode(name)}=${uriEncode(value)}`)).join('&')}` : '';
    const timeoutMs = request.timeoutMs ?? REQUEST_TIMEOUT_MS;
    const transport = base.protocol === 'https:' ? https : http;
    return new Promise<S3Response>((resolve, reject) => {
      const req = transport.request({ protocol: base.protocol, hostname: base.hostname, port: base.port || undefined, method: request.method, path: `${path}${search}`, headers: signed, agent: this.agent });
      let stream: Readable | undefined;
      const fail = (error: S3Error) => {
        clearTimeout(deadline);
        req.destroy();
        stream?.destroy();
        reject(error);
      };
      const deadline = setTimeout(() => fail(new S3Error('TimeoutError', `request timed out after ${timeoutMs} ms`)), timeoutMs);
      req.once('socket', (socket) => {
        if (!socket.connecting) return;
        // A connection never made proves the request was not carried out (s3-client.ts, mayHaveLanded).
        const connecting = setTimeout(() => fail(new S3Error(CONNECT_TIMEOUT, `did not establish a connection within ${CONNECTION_TIMEOUT_MS} ms`)), CONNECTION_TIMEOUT_MS);
        socket.once('connect', () => clearTimeout(connecting));
        socket.once('close', () => clearTimeout(connecting));
      });
      req.on('error', (error: NodeJS.ErrnoException) => fail(new S3Error(error.code ?? 'NetworkError', error.message, { ...(error.code ? { code: error.code } : {}), cause: error })));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error: NodeJS.ErrnoException) => fail(new S3Error(error.code ?? 'NetworkError', error.message, { ...(error.code ? { code: error.code } : {}), cause: error })));
        res.on('end', () => {
          clearTimeout(deadline);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) });
        });
      });
      if (bytes) req.end(bytes);
      else if (body !== undefined && typeof body === 'object' && 'stream' in body) {
        stream = body.stream();
        stream.on('error', (error) => fail(new S3Error('BodyReadError', error.message, { cause: error })));
        stream.pipe(req);
      } else req.end();
    });
  }
}

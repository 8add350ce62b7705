import type { IncomingMessage } from 'node:http';
import { redactCredentials } from '../domain/redact-credentials.ts';
import pino, { type Logger } from 'pino';

/** Query parameters that carry secrets and must never reach a log line, by their decoded name. */
const SECRET_NAME = /^(api_key|token|secret)(?:=|$)/i;

/** A query parameter's name as the query parser reads it: percent-decoded, "+" a space. */
const decoded = (text: string): string => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
};

/**
 * The URL with the value of every secret parameter replaced. Names are judged as the query
 * parser decodes them: `?api%5Fkey=` is the `api_key` the webhook routes accept, and a name
 * that swallowed its value (`?api_key%3D<key>`, an encoded "=") is cut at the secret's name.
 */
export const redactUrl = (url: string | undefined): string | undefined => {
  const start = url?.indexOf('?') ?? -1;
  if (url === undefined || start < 0) return url;
  const hash = url.indexOf('#', start);
  const end = hash < 0 ? url.length : hash;
  const params = url
    .slice(start + 1, end)
    .split('&')
    .map((param) => {
      const eq = param.indexOf('=');
      const secret = SECRET_NAME.exec(decoded(eq < 0 ? param : param.slice(0, eq)));
      return secret ? `${secret[1]}=[redacted]` : param;
    });
  return `${url.slice(0, start + 1)}${params.join('&')}${url.slice(end)}`;
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
    // The CLI flushes before exiting, so shutdown and fatal lines are not lost.
    destination ?? pino.destination({ dest: 1, sync: false }),
  );

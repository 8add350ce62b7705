import type { IncomingMessage } from 'node:http';
import pino, { type Logger } from 'pino';

/** Query parameters that carry secrets and must never reach a log line. */
const SECRET_PARAMS = /([?&](?:api_key|token|secret)=)[^&#]*/gi;

export const redactUrl = (url: string | undefined): string | undefined => url?.replace(SECRET_PARAMS, '$1[redacted]');

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
        err: pino.stdSerializers.err,
        req: (req: IncomingMessage) => ({ method: req.method, url: redactUrl(req.url) }),
      },
    },
    // Asynchronous writes: a synchronous write per line costs more than the request it logs.
    // The CLI flushes before exiting, so shutdown and fatal lines are not lost.
    destination ?? pino.destination({ dest: 1, sync: false }),
  );

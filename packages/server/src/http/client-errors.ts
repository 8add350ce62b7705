import { type IncomingMessage, STATUS_CODES, type ServerResponse, maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { logAccess } from './access-log.ts';
import { codeForStatus, errorBody } from './error-body.ts';
import { nextRequestId, requestIdOf } from './request-ids.ts';
import { REFUSED_BEFORE_ROUTING, type RequestMetrics } from './request-metrics.ts';

/**
 * The method label of a refused request whose method Node's parser did not hand over: the
 * raw bytes may hold anything there, and a label value per string sent would be unbounded.
 */
const UNREAD_METHOD = 'unknown';

/**
 * The status and message for a request Node's HTTP parser refused, by the parser's error code;
 * `timeoutMs` is the request timeout (CAIRN_REQUEST_TIMEOUT_MS).
 */
const refusalOf = (error: NodeJS.ErrnoException & { reason?: unknown }, timeoutMs: number): { status: number; message: string } => {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: `the request was not received within ${timeoutMs / 1000} s` };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: `the request's headers are larger than ${maxHeaderSize / 1024} KiB` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'a chunk extension of the body is too large' };
    default:
      // llhttp's reason is a fixed description of the rule broken ("Invalid method", …).
      return { status: 400, message: `the request is not valid HTTP/1.1${typeof error.reason === 'string' ? `: ${error.reason}` : ''}` };
  }
};

/** llhttp's code for a connection that ended in the middle of a request. */
const CLIENT_ENDED = 'HPE_INVALID_EOF_STATE';

/**
 * Routed requests that Node's parser refused midway (a body not received in time), by the
 * status answered. Their route's own end-of-response listener counts and times them under the
 * route (request-hooks.ts): they were routed, and a route whose clients stall belongs in its
 * own series, not among the requests no route saw.
 */
export const refusedMidway = new WeakMap<ServerResponse, number>();

/**
 * Requests Node's HTTP parser refuses before fastify sees them (a malformed request line or
 * header, framing that does not add up, headers over Node's limit, a request not received
 * within `timeoutMs`): answered with the error body of SPEC §4 and a request id, as fastify's
 * option `clientErrorHandler`, instead of fastify's own body. As Node's own handler does,
 * nothing is written once a response on the connection has begun (it would corrupt it), and
 * the connection is closed: what follows on it cannot be trusted to be a request. An answered
 * refusal is written to the access log, and counted in `requests` under the route
 * REFUSED_BEFORE_ROUTING, or under its route when its headers had come and the parser refused
 * the rest (refusedMidway): one whose client ended it midway keeps the first label.
 */
export const clientErrorAnswerer = (timeoutMs: number, requests: RequestMetrics) =>
  function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
    // The client went away: there is no one to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const id = nextRequestId();
      const { status, message } = refusalOf(error, timeoutMs);
      const body = JSON.stringify(errorBody(codeForStatus(status), message, id));
      // What the parser read of the request: its method and URL once its headers were whole
      // (a request that then stalled in its body, which fastify has routed), else nothing.
      const request = inFlight?.req;
      // A request whose client ended it before it was whole (EOF) is answered, should it still
      // read, but is not its route's: a client gone away is not counted there (request-hooks.ts).
      if (inFlight && request && error.code !== CLIENT_ENDED) refusedMidway.set(inFlight, status);
      // Not timed: its start is Node's.
      else requests.route(request?.method ?? UNREAD_METHOD, REFUSED_BEFORE_ROUTING).countOnly(status);
      logAccess(this.log, request?.method ?? null, request?.url ?? null, status, null, { request_id: id, code: error.code });
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };

/** How much of an unmet Expect header the refusal repeats. */
const EXPECTATION_SHOWN = 100;

/**
 * A request whose `Expect` asks for anything but 100-continue (RFC 9110 §10.1.1), which Node
 * answers 417 itself, with an empty body, before fastify sees it: answered here instead with
 * SPEC §4's error body and a request id, counted and logged as the parser's refusals are. The
 * connection is closed: the client may send its body all the same, and it is not a request.
 */
export const unmetExpectationAnswerer = (app: FastifyInstance, requests: RequestMetrics) =>
  function answerUnmetExpectation(request: IncomingMessage, response: ServerResponse): void {
    const id = requestIdOf(request);
    const asked = String(request.headers.expect ?? '').slice(0, EXPECTATION_SHOWN);
    const body = JSON.stringify(errorBody(codeForStatus(417), `the Expect header asks for ${JSON.stringify(asked)}; this server meets 100-continue only`, id));
    requests.route(request.method ?? UNREAD_METHOD, REFUSED_BEFORE_ROUTING).countOnly(417);
    logAccess(app.log, request.method ?? null, request.url ?? null, 417, null, { request_id: id });
    response
      .writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'x-request-id': id, connection: 'close' })
      .end(body);
  };

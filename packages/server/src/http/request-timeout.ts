import type { ServerOptions } from 'node:http';

/*
 * How long a client has to send a whole request, headers and body, is CAIRN_REQUEST_TIMEOUT_MS
 * (30 s unless set; a body is at most 1 MiB: seconds on any working link). A client that
 * stalls half-way is answered 408 and cut off when it runs out: until then its request holds
 * one of the CAIRN_MAX_CONCURRENT slots, and a few stalled uploads would answer every other
 * request 503 for as long as they stayed connected. Only receiving the request is timed: a
 * response streamed for minutes (an event stream, an export) is not.
 */

/**
 * How often Node looks for requests past their time. Its default, 30 s, would let a stalled
 * request live up to 30 s past its timeout; each look walks only the connections in the
 * middle of receiving a request. (The configuration allows no timeout shorter than this.)
 */
const TIMEOUT_CHECK_MS = 1000;

/**
 * The fastify options that bound receiving a request to `timeoutMs`. Fastify sets the server's
 * request timeout from its own option (0, none, unless given); the time allowed for the
 * headers and the checking interval are Node's own server options. The headers get the whole
 * time: a request whose headers are late is late as a whole.
 */
export const requestTimeoutOptions = (timeoutMs: number) => ({
  requestTimeout: timeoutMs,
  http: { requestTimeout: timeoutMs, headersTimeout: timeoutMs, connectionsCheckingInterval: TIMEOUT_CHECK_MS } satisfies ServerOptions,
});

import type { Server, ServerResponse } from 'node:http';

/**
 * What a graceful stop needs from the raw HTTP server, beyond what fastify's close does.
 *
 * `server.close()` stops listening and destroys the keep-alive connections idle at that
 * instant, but a response already in flight goes out with `Connection: keep-alive`: its
 * socket then stays open until the keep-alive timeout (72 s in fastify), and a client that
 * sends its next request just as the socket is reaped sees a reset. So, once draining, every
 * response not yet started says `Connection: close` (the client opens a new connection for
 * its next request instead of racing the reaper), and the in-flight count tells shutdown and
 * /metrics what is still running.
 */
export class HttpDrain {
  private readonly inFlight = new Set<ServerResponse>();
  private started = false;

  constructor(server: Server) {
    // Prepended, so it runs before fastify's own listener has a chance to answer.
    server.prependListener('request', (_request, response: ServerResponse) => {
      if (this.started) response.setHeader('connection', 'close');
      this.inFlight.add(response);
      response.once('close', () => this.inFlight.delete(response));
    });
  }

  get draining(): boolean {
    return this.started;
  }

  /** Requests received whose response has not finished (or whose socket has not closed). */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** From now on every response closes its connection; /ready answers 503. */
  begin(): void {
    if (this.started) return;
    this.started = true;
    for (const response of this.inFlight) {
      if (!response.headersSent) response.setHeader('connection', 'close');
    }
  }
}

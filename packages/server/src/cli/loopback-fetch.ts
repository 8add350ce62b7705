import { request } from 'node:http';
import { Readable } from 'node:stream';

/**
 * `fetch` over a new connection per request, for the `cairn mcp` processes that forward to the
 * one that has their data directory open, on this machine. A kept-alive connection lets a
 * request go out on a socket the stopping owner is just closing, which answers ECONNRESET:
 * the caller cannot tell whether the call ran. On a fresh connection, an owner that stopped
 * listening answers ECONNREFUSED, and the call is known never to have reached it.
 */
export const loopbackFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> =>
  new Promise((resolve, reject) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const body = typeof init.body === 'string' ? init.body : init.body == null ? undefined : String(init.body);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const req = request(url, { method: init.method ?? 'GET', headers, agent: false }, (res) => {
      const answerHeaders = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
      const status = res.statusCode ?? 502;
      // A Response with status 204 or 304 has no body.
      const stream = status === 204 || status === 304 ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
      if (stream === null) res.resume();
      resolve(new Response(stream, { status, headers: answerHeaders }));
    });
    // As fetch fails: a TypeError whose cause is the socket's error (code ECONNREFUSED …).
    req.once('error', (error) => reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error })));
    signal?.addEventListener('abort', () => req.destroy(), { once: true });
    req.end(body);
  });

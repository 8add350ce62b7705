import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../domain/errors.ts';

/** What the check needs of the configuration: where the server listens, and its public address. */
export interface OriginSettings {
  /** CAIRN_HOST: the address the server listens on. */
  host: string;
  /** CAIRN_PUBLIC_URL, without its trailing slash. */
  publicUrl?: string | undefined;
}

/** A host name as URLs write it, lower-cased, IPv6 without its brackets. */
const bare = (hostname: string): string => hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');

/** localhost, a name under .localhost, 127.0.0.0/8 or ::1 (also as ::ffff:127.x.y.z). */
export const isLoopbackName = (hostname: string): boolean => {
  const name = bare(hostname);
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  if (isIP(name) === 6) return name === '::1' || /^::ffff:127\./.test(name) || /^(0+:){7}0*1$/.test(name);
  return false;
};

/** A Host header ("example.com:8080", "[::1]:8080", "localhost") as its name and port, or null when it is not one. */
const parseHost = (hostHeader: string): { hostname: string; port: string | undefined } | null => {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]@/?#\s\\]+)(?::(\d{1,5}))?$/.exec(hostHeader);
  return match ? { hostname: bare(match[1] as string), port: match[2] } : null;
};

const defaultPort = (protocol: string): string => (protocol === 'https:' ? '443' : '80');

/**
 * A check of each request's Host and Origin: why it is refused as one a browser was made to send to this server from another site
 * (DNS rebinding, a cross-site form or fetch), or null when it is not:
 * - a server listening on a loopback address (the default, 127.0.0.1) answers only requests
 *   whose Host is a loopback name or address (any port), or CAIRN_PUBLIC_URL's host: a page of
 *   evil.example that rebinds its name to 127.0.0.1 sends `Host: evil.example`. A server
 *   listening elsewhere (0.0.0.0 in a container, behind an ingress) is reached by names it
 *   cannot know, and checks no Host.
 * - a request with an Origin (browsers send one on cross-origin requests and on every POST,
 *   PUT and DELETE) must come from the server's own origin: a loopback origin when the Host is
 *   loopback too, CAIRN_PUBLIC_URL's origin, or the Host the request was sent to (http or https:
 *   behind a TLS proxy the server sees http). Requests without one (curl, the client, webhook
 *   deliveries, `cairn mcp` forwarding) pass.
 */
export const originCheck = (settings: OriginSettings): ((hostHeader: string | undefined, origin: string | undefined) => string | null) => {
  const publicUrl = settings.publicUrl && URL.canParse(settings.publicUrl) ? new URL(settings.publicUrl) : null;
  const listensOnLoopback = isLoopbackName(settings.host);
  // Host headers already passed without an Origin: the common request is a set lookup.
  const passed = new Set<string>();
  return (hostHeader, origin) => {
    if (origin === undefined && (hostHeader === undefined || passed.has(hostHeader))) return null;
    const host = hostHeader === undefined ? null : parseHost(hostHeader);
    const hostname = host?.hostname ?? null;
    const publicHost = publicUrl !== null && hostname !== null && hostname === bare(publicUrl.hostname);
    const loopbackHost = hostname !== null && isLoopbackName(hostname);
    if (hostHeader !== undefined && listensOnLoopback && !loopbackHost && !publicHost) {
      return `Host ${JSON.stringify(hostHeader.slice(0, 200))} is not an address of this server: it listens on ${settings.host}, so it answers localhost or a loopback address${publicUrl ? ` and ${publicUrl.host} (CAIRN_PUBLIC_URL)` : ' (behind a proxy that passes another Host, set CAIRN_PUBLIC_URL)'}`;
    }
    if (origin === undefined) {
      // Bounded: a server reached by many names (any Host passes one not on loopback) stops remembering.
      if (hostHeader !== undefined && passed.size < 64) passed.add(hostHeader);
      return null;
    }
    const from = URL.canParse(origin) ? new URL(origin) : null;
    if (from !== null && (from.protocol === 'http:' || from.protocol === 'https:')) {
      if (loopbackHost && isLoopbackName(from.hostname)) return null;
      if (publicUrl !== null && from.origin === publicUrl.origin) return null;
      if (host !== null && bare(from.hostname) === host.hostname && (from.port || defaultPort(from.protocol)) === (host.port ?? defaultPort(from.protocol))) return null;
    }
    return `Origin ${JSON.stringify(origin.slice(0, 200))} is not this server's: a page of another site may not call it (set CAIRN_PUBLIC_URL to the address browsers reach this server at)`;
  };
};

/**
 * Refuse, 403, what originCheck refuses, on every route: the MCP Streamable HTTP transport
 * requires servers to validate Origin, and in open mode (no key, the default for a local
 * server) anything a browser can be made to send would read and write memory. /mcp answers in
 * JSON-RPC, as its other HTTP-level refusals; every other route in the API's error shape.
 */
export const registerOriginCheck = (app: FastifyInstance, settings: OriginSettings): void => {
  const refusal = originCheck(settings);
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const refused = refusal(request.headers.host, request.headers.origin);
    if (refused === null) return done();
    if (request.routeOptions.url === '/mcp') {
      void reply.status(403).type('application/json').send({ jsonrpc: '2.0', error: { code: -32000, message: `Forbidden: ${refused}` }, id: null });
      return;
    }
    done(new ServiceError('FORBIDDEN', refused));
  });
};

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import { PACKAGE_ROOT } from '../package-files.ts';
import type { RoutePlugin } from './http-context.ts';

/** Where `npm run build` puts the dashboard (dashboard/vite.config.ts). */
export const DASHBOARD_DIST = fileURLToPath(new URL('dashboard/dist/', PACKAGE_ROOT));

/** Vite names every file under assets/ by its content hash: a changed file is a new URL. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

// The dashboard loads nothing from elsewhere and talks only to this server; a page that
// holds an API key must not be framed by another site.
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Cairn</title>
<p>The dashboard is not built. Run <code>npm run build</code> (or <code>npm start</code>, which builds it when missing) and reload.</p>
<p>The API works without it: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p>`;

const noCache = (reply: FastifyReply): FastifyReply => reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'no-cache' });

/**
 * The web dashboard (SPEC §5): its built files at /dashboard, `/` redirecting there. Every
 * route here is public and serves only files from dist/ — the page asks for a key and sends
 * it with each API call, so nothing here reveals data. Compressed copies (.br, .gz) are made
 * at build time and picked by Accept-Encoding.
 */
export const dashboardRoutes: RoutePlugin = async (app, { keys }) => {
  const root = DASHBOARD_DIST;
  const config = { public: true };
  const schema = { hide: true };
  app.get('/', { config, schema }, async (_request, reply) => reply.redirect('/dashboard/', 302));

  // Lets the page know whether to ask for a key before its first call, instead of learning
  // it from a 401 (which the browser logs as an error). Whether keys are on is no secret:
  // any request without one finds out.
  app.get('/dashboard/auth.json', { config, schema }, async (_request, reply) => {
    void reply.headers({ 'cache-control': 'no-store' });
    return { key_required: !(await keys.openMode()) };
  });

  if (!existsSync(`${root}index.html`)) {
    const notBuilt = async (_request: unknown, reply: FastifyReply) => noCache(reply).type('text/html; charset=utf-8').status(503).send(NOT_BUILT);
    app.get('/dashboard', { config, schema }, notBuilt);
    app.get('/dashboard/*', { config, schema }, notBuilt);
    return;
  }

  await app.register(async (scope) => {
    await scope.register(fastifyStatic, { root, serve: false, preCompressed: true, index: false, dotfiles: 'deny' });
    // An answer that is not the file (404 for an asset this release does not have: a page of
    // another release asking a replica of this one, mid-upgrade) must not be kept a year.
    scope.addHook('onSend', async (_request, reply, payload) => {
      if (reply.statusCode >= 400) void reply.header('cache-control', 'no-store');
      return payload;
    });
    const index = async (_request: unknown, reply: FastifyReply) => noCache(reply).sendFile('index.html', { cacheControl: false });
    scope.get('/dashboard', { config, schema }, index);
    scope.get('/dashboard/', { config, schema }, index);
    scope.get('/dashboard/*', { config, schema }, async (request, reply) => {
      const file = (request.params as { '*': string })['*'];
      if (file.startsWith('assets/')) return reply.headers({ 'cache-control': IMMUTABLE, 'x-content-type-options': 'nosniff' }).sendFile(file, { cacheControl: false });
      // Unhashed files (the icon) may change with any release: revalidate by ETag.
      return noCache(reply).sendFile(file, { cacheControl: false });
    });
  });
};

import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';

/**
 * A stand-in for a model hub with Hugging Face's layout (`/<owner>/<name>/resolve/main/<file>`),
 * which tests cannot reach: it serves the models in `models` (id → directory) and answers 404
 * for the rest. `mode` makes it misbehave: `garbage` answers 200 with an HTML page for every
 * file (a captive portal, a proxy's error page), `cut` sends half of each file and then drops
 * the connection.
 */
export interface ModelHub {
  url: string;
  mode: 'ok' | 'garbage' | 'cut';
  /** Paths asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

export const startModelHub = async (models: Record<string, string>): Promise<ModelHub> => {
  const hub: ModelHub = { url: '', mode: 'ok', requests: [], close: async () => {} };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://hub').pathname);
    hub.requests.push(path);
    if (hub.mode === 'garbage') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Sign in to continue</body></html>');
      return;
    }
    const match = /^\/([^/]+\/[^/]+)\/resolve\/main\/(.+)$/.exec(path);
    const dir = match ? models[match[1] as string] : undefined;
    if (!match || !dir || normalize(match[2] as string).startsWith('..')) {
      res.writeHead(404).end('Entry not found');
      return;
    }
    readFile(join(dir, match[2] as string)).then(
      (body) => {
        if (hub.mode === 'cut') {
          res.writeHead(200, { 'content-length': String(body.length) });
          res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.destroy());
          return;
        }
        res.writeHead(200, { 'content-length': String(body.length) }).end(body);
      },
      () => res.writeHead(404).end('Entry not found'),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  hub.close = () => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return hub;
};

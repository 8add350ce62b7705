import { createServer } from 'node:net';

// Asks the kernel for an unused loopback port by binding port 0. The port is released before
// the caller binds it, so another process could grab it in between; on a test machine that
// race is rare enough not to matter, and it keeps parallel test files from colliding.
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

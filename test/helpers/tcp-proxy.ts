import { type Socket, connect, createServer } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of `target`, which can silence chosen connections: their
 * bytes stop flowing both ways while both sockets stay open, as through a middlebox whose far
 * side died without a word. The client's kernel sees nothing wrong (keepalive probes are
 * answered by the proxy's socket), so only the application can notice.
 */
export const startTcpProxy = async (target: { host: string; port: number }) => {
  const links = new Set<{ client: Socket; server: Socket; sent: string; silent: boolean }>();
  const proxy = createServer((client) => {
    const server = connect(target.port, target.host);
    const link = { client, server, sent: '', silent: false };
    links.add(link);
    client.on('data', (chunk: Buffer) => {
      // What the client said, kept short, so a test can pick connections by their queries.
      if (link.sent.length < 64 * 1024) link.sent += chunk.toString('latin1');
      if (!link.silent) server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      if (!link.silent) client.write(chunk);
    });
    const drop = () => {
      links.delete(link);
      client.destroy();
      server.destroy();
    };
    client.on('close', drop).on('error', drop);
    server.on('close', drop).on('error', drop);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as { port: number }).port;
  return {
    port,
    /** Silences every open connection whose client has sent text matching `said`; returns how many. */
    silence(said: RegExp): number {
      let count = 0;
      for (const link of links) {
        if (!said.test(link.sent)) continue;
        link.silent = true;
        count += 1;
      }
      return count;
    },
    async stop(): Promise<void> {
      for (const link of links) {
        link.client.destroy();
        link.server.destroy();
      }
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
};

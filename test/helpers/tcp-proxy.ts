import { type Socket, connect, createServer } from 'node:net';

/** A TCP proxy in front of a server, breaking chosen connections the ways networks do. */
export interface TcpProxy {
  port: number;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Silences every open connection whose client has sent text matching `said`; returns how many. */
  silence(said: RegExp): number;
  /** Closes every open connection whose client has sent text matching `said`; returns how many. */
  drop(said: RegExp): number;
  /** While on, every new connection is closed at once (a server gone). */
  refuse(on: boolean): void;
  stop(): Promise<void>;
}

/**
 * A TCP proxy on 127.0.0.1 in front of `target`, which can silence chosen connections: their
 * bytes stop flowing both ways while both sockets stay open, as through a middlebox whose far
 * side died without a word. The client's kernel sees nothing wrong (keepalive probes are
 * answered by the proxy's socket), so only the application can notice. It can also drop them,
 * or refuse new ones.
 */
export const startTcpProxy = async (target: { host: string; port: number }): Promise<TcpProxy> => {
  const links = new Set<{ client: Socket; server: Socket; sent: string; silent: boolean }>();
  let refusing = false;
  const proxy = createServer((client) => {
    if (refusing) return void client.destroy();
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
  const matching = (said: RegExp) => [...links].filter((link) => said.test(link.sent));
  const close = (link: { client: Socket; server: Socket }) => {
    link.client.destroy();
    link.server.destroy();
  };
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    silence(said) {
      const picked = matching(said);
      for (const link of picked) link.silent = true;
      return picked.length;
    },
    drop(said) {
      const picked = matching(said);
      for (const link of picked) close(link);
      return picked.length;
    },
    refuse(on) {
      refusing = on;
    },
    async stop() {
      for (const link of links) close(link);
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
};

import { type Socket, connect, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { noteConnection, yieldTurns } from '../../packages/server/src/event-loop.ts';

/** Hold the thread for `ms`, as a slice of background work does. */
const busy = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('background work yields to new connections', () => {
  const sockets: Socket[] = [];
  afterEach(() => {
    for (const s of sockets.splice(0)) s.destroy();
  });

  it('takes in a burst of connections within a slice or two, not one per slice', async () => {
    // A real listening socket: libuv accepts one connection per turn of the event loop.
    const server = createServer((socket) => sockets.push(socket));
    server.on('connection', noteConnection);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const acceptedAtSlice: number[] = [];
    let slice = 0;
    server.on('connection', () => acceptedAtSlice.push(slice));
    for (let i = 0; i < 40; i++) sockets.push(connect(port, '127.0.0.1'));
    // Background work: 5 ms slices with a yield between them, while the connections arrive.
    for (slice = 0; slice < 60 && acceptedAtSlice.length < 40; slice++) {
      busy(5);
      await yieldTurns();
    }
    for (const s of sockets.splice(0)) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(acceptedAtSlice).toHaveLength(40);
    // One turn per yield accepted one connection per slice: the last at slice 39 or so.
    expect(Math.max(...acceptedAtSlice)).toBeLessThanOrEqual(3);
  });

  it('takes a single turn when no connection arrives', async () => {
    let turns = 0;
    let counting = true;
    const count = (): void => {
      turns += 1;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    await yieldTurns();
    counting = false;
    // The counter ran once per turn that passed while yielding (it started in the same turn).
    expect(turns).toBeLessThanOrEqual(2);
  });
});

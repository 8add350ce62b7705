/**
 * How background work (a saved index read or written in slices, a renumbering's sweep, a
 * compaction, a backlog of embeddings) gives way to requests each time it yields.
 *
 * libuv accepts one new connection per turn of the event loop (libuv#3696: it no longer
 * accepts in a loop), and a turn of background work is a slice of a few milliseconds. Yielding
 * a single turn per slice held the server to about 250 new connections a second while such
 * work ran: a client opening 50 connections right after a restart at a million entries waited
 * up to half a second for the last of them to be accepted, one per slice of the index's
 * restore. Giving every yield several turns fixed that but halved the background work's share
 * under a steady load (each turn also runs the requests that are ready: a restart's index load
 * under 50 writing connections took 15 s instead of 6). So a yield takes another turn only
 * while the last one accepted a connection, up to MAX_TURNS: a burst of new connections is
 * taken in, and a steady load of kept-alive ones changes nothing.
 */
const MAX_TURNS = 32;

let accepted = 0;

/** Count a connection the HTTP server accepted (the server reports each one). */
export const noteConnection = (): void => {
  accepted += 1;
};

/** Let requests, new connections and I/O run: one turn of the event loop, more while connections arrive. */
export const yieldTurns = async (): Promise<void> => {
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const before = accepted;
    await new Promise((resolve) => setImmediate(resolve));
    if (accepted === before) return;
  }
};

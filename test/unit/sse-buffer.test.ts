import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { SseConnection } from '../../packages/server/src/http/sse.ts';

const MiB = 1024 * 1024;

/**
 * A response whose client never reads: everything written stays buffered, as it does on a
 * socket once the kernel's buffers are full.
 */
class StalledResponse extends EventEmitter {
  writableLength = 0;
  destroyed = false;
  ended = false;
  writeHead(): this {
    return this;
  }
  write(chunk: string): boolean {
    this.writableLength += Buffer.byteLength(chunk);
    return false;
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

describe('a stream whose reader stopped reading', () => {
  it('is cut off once 1 MiB waits unsent for it, holding no more than that (8 MiB before)', () => {
    const res = new StalledResponse();
    let closed = 0;
    const connection = new SseConnection(res as unknown as ServerResponse, 60_000, () => closed++);
    const event = { value: 'x'.repeat(100_000) };
    let sent = 0;
    while (!res.destroyed && sent < 100) {
      connection.send('entry', event, `p/k@${sent}`);
      sent++;
    }
    expect(res.destroyed).toBe(true);
    expect(res.ended).toBe(false);
    expect(closed).toBe(1);
    // Cut at the first frame past 1 MiB: 11 frames of 100 KB buffered, the 12th refused.
    expect(sent).toBeLessThanOrEqual(12);
    expect(res.writableLength).toBeLessThan(MiB + 200_000);
    // Nothing more is written once cut.
    const held = res.writableLength;
    connection.send('entry', event);
    expect(res.writableLength).toBe(held);
  });
});

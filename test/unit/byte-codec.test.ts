import { describe, expect, it } from 'vitest';
import { ByteReader, ByteWriter } from '../../packages/server/src/search/byte-codec.ts';

/** The saved search index's encoding: what is written reads back the same, CRC included. */
describe('byte codec', () => {
  it('reads back strings of every size and script, numbers and byte runs, across chunk boundaries', async () => {
    const chunks: Buffer[] = [];
    const w = new ByteWriter(async (chunk) => void chunks.push(Buffer.from(chunk)));
    const strings = ['', 'déploiement', '数据库连接池', '🚀 rollout', 'x'.repeat(700_000), 'é'.repeat(300_000)];
    for (let i = 0; i < 3_000; i++) {
      for (const s of strings.slice(0, 4)) w.str(`${s} ${i}`);
      w.varint(i * 1_000_003);
      if (i % 1_000 === 0) {
        for (const s of strings.slice(4)) w.str(s);
        w.bytes(new Uint8Array(600_000).fill(i % 251));
      }
      await w.flushIfFull();
    }
    await w.finish();
    const r = await ByteReader.checked(Buffer.concat(chunks));
    expect(r).not.toBeNull();
    for (let i = 0; i < 3_000; i++) {
      for (const s of strings.slice(0, 4)) expect(r?.str()).toBe(`${s} ${i}`);
      expect(r?.varint()).toBe(i * 1_000_003);
      if (i % 1_000 === 0) {
        for (const s of strings.slice(4)) expect(r?.str()).toBe(s);
        expect(r?.bytes(600_000).every((b) => b === i % 251)).toBe(true);
      }
    }
    expect(r?.done).toBe(true);
  });
});

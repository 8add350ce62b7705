import pino from 'pino';
import { expect, it } from 'vitest';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import { EmbeddingBacklog } from '../../packages/server/src/store/postgres/search-backlog.ts';

// /metrics reads `pending` (cairn_search_pending_embeddings): between a start with a new
// embedder and the backlog's first count of the rows it must embed again, 0 said "caught up"
// while every row still held the old embedder's vector (the evaluation then searched them).
it('reports rows pending until its first count says how many', () => {
  const backlog = new EmbeddingBacklog(null as never, new BuiltinEmbedder(), pino({ level: 'silent' }), async () => {});
  expect(backlog.pending).toBeGreaterThan(0);
});

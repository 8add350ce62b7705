import postgres from 'postgres';
import { afterAll, expect, it } from 'vitest';
import { postgresBackend } from '../helpers/backend-env.ts';
import { httpCall } from '../helpers/http-call.ts';
import { spawnCairn } from '../helpers/spawn-cairn.ts';
import { spawnCortex } from '../helpers/spawn-cortex.ts';

/**
 * A worker that loses its lease in the middle of a compile stops at the next path (ports/
 * leases.ts: work stops at once), instead of finishing the job beside the new leader.
 */
const backend = postgresBackend('cortexlease');
afterAll(() => backend.cleanup());

interface LogLine { time: string; msg: string; reason?: string }
const lines = (out: string): LogLine[] => out.split('\n').flatMap((l) => { try { return [JSON.parse(l) as LogLine]; } catch { return []; } });

it('stops compiling at the next path once the lease is lost', async () => {
  const env: Record<string, string> = { ...(await backend.env()), CAIRN_CORTEX_DEBOUNCE_MS: '200' };
  const sql = postgres(env.CAIRN_DB_DSN ?? '', { max: 1, onnotice: () => {} });
  const api = await spawnCairn(env);
  try {
    // Enough paths that the catch-up outlasts the lease's next renew (every second) on a fast
    // host: 1,500 were compiled in 0.77 s, before the worker could learn of the loss.
    for (let i = 0; i < 6000; i += 100) {
      const entries = Array.from({ length: 100 }, (_, j) => ({ entity_path: `bulk/p${String(i + j).padStart(5, '0')}`, key: 'k', value: { text: `value ${i + j}` } }));
      expect((await httpCall(api.url, 'POST', '/api/v1/entries/batch', { entries }, 60_000)).status).toBeLessThan(300);
    }
    const w1 = await spawnCortex(env);
    try {
      await w1.waitFor(/catching up/);
      // End the session that holds the lease (an advisory lock), and take the lock here, so
      // W1 cannot win it back: it learns of the loss at its next renew.
      const ended = await sql`select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and objsubid = 2 and granted`;
      expect(ended.length).toBeGreaterThan(0);
      await sql`select pg_advisory_lock(${0x63616972}::int4, ${0x6e637478}::int4)`;
      await w1.waitFor(/lost the lease/, 20_000);
      expect(w1.output()).not.toMatch(/cortex caught up/);
      const lostAt = Date.parse(lines(w1.output()).find((l) => l.reason === 'lost the lease')?.time ?? '');
      expect(lostAt).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 3000));
      // W1 writes no compile event after the one path it was compiling when it learnt of the loss.
      expect(w1.output()).not.toMatch(/cortex caught up/);
      const rows = await sql<{ id: string }[]>`select id from cairn_records where collection = 'cortex/default/log' and id like ${`%-${w1.workerId}-%`}`;
      expect(rows.length).toBeGreaterThan(0);
      const late = rows.map((r) => Number(r.id.slice(0, 15))).filter((t) => t > lostAt + 300);
      expect(late).toEqual([]);
    } finally {
      await w1.stop();
    }
  } finally {
    await api.stop();
    await sql.end();
  }
}, 120_000);

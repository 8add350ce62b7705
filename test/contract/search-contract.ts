import { describe, expect, it } from 'vitest';
import type { Cairn } from '../helpers/cairn.ts';

interface Hit {
  entry: { entity_path: string; key: string; version: number; namespace: string };
  score: number;
  parts: { text: { rank: number } | null; vector: { rank: number } | null };
  highlights: { field: string; fragment: string; matches: [number, number][] }[];
}

let unique = 0;
/** A path of its own per test, with a random word no other test uses, so results are exact. */
const fresh = () => {
  const n = `${++unique}${Date.now().toString(36)}`;
  return { path: `search/t${n}`, word: `zq${n}x` };
};

/**
 * POST /api/v1/search on a running server (SPEC §5): the same answers on every backend. A
 * write is searchable by text once acknowledged; vectors may come a moment later (a remote
 * embedder, PostgreSQL's indexer), so expectations on them poll.
 */
/**
 * `sampledStatistics`: the backend's search reads its BM25 statistics now and then rather than
 * on every write (PostgreSQL's SQL search: search-stats.ts), so a score may move between two
 * searches whenever they are read again; tests comparing scores across writes check those
 * statistics directly instead (test/integration/postgres-search-same-text.test.ts).
 */
export const describeSearchContract = (server: () => Cairn, { sampledStatistics = false } = {}): void => {
  const search = async (body: Record<string, unknown>): Promise<Hit[]> => {
    const res = await server().call('POST', '/api/v1/search', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.results as Hit[];
  };
  const keys = async (body: Record<string, unknown>): Promise<string[]> => (await search(body)).map((h) => h.entry.key);
  const write = async (body: Record<string, unknown>) => {
    const res = await server().call('POST', '/api/v1/entries', body);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body.entry;
  };

  describe('search', () => {
    it('finds entries by stemmed words in value, key, path and tags, and shows why', async () => {
      const { path, word } = fresh();
      await write({ entity_path: path, key: 'pr-7', value: { title: `Retries storming the ${word} gateway`, state: 'merged' }, tags: ['ci'] });
      await write({ entity_path: path, key: 'note', value: `nothing to see about ${word}` });
      await expect.poll(() => keys({ query: `${word} retry storms`, mode: 'text', entity_path: path }), { timeout: 5000 }).toEqual(['pr-7', 'note']);
      const [hit] = await search({ query: `${word} retry storms`, entity_path: path, limit: 1 });
      expect(hit?.parts.text?.rank).toBe(1);
      expect(typeof hit?.score).toBe('number');
      const highlight = hit?.highlights.find((h) => h.field === 'value.title');
      expect(highlight?.matches.map(([s, e]) => highlight.fragment.slice(s, e))).toEqual(['Retries', 'storming', word]);
      expect(await keys({ query: 'pr-7', mode: 'text', entity_path: path })).toEqual(['pr-7']);
    });

    it('finds a write by text as soon as it is acknowledged, and stops once its delete is', async () => {
      const { path, word } = fresh();
      for (let i = 0; i < 5; i++) {
        await write({ entity_path: path, key: `k${i}`, value: `${word} acknowledged ${i}` });
        // No polling: the acknowledgement is the promise that the version is searchable.
        expect((await keys({ query: word, mode: 'text', entity_path: path })).sort()).toEqual(Array.from({ length: i + 1 }, (_, j) => `k${j}`));
      }
      await write({ entity_path: path, key: 'k0', value: `replaced ${path}` });
      expect(await keys({ query: word, mode: 'text', entity_path: path })).not.toContain('k0');
      const res = await server().call('DELETE', `/api/v1/entries/${path}/k1`);
      expect(res.status).toBe(204);
      expect((await keys({ query: word, mode: 'text', entity_path: path })).sort()).toEqual(['k2', 'k3', 'k4']);
    });

    it('finds the few entries with a rare query word ahead of many with a common one', async () => {
      // BM25 puts a rare word's matches first; a preselection by how often the words occur
      // (PostgreSQL's ts_rank knows no rarity) would crowd them out with the common word's.
      // 400 common entries: four times the rows PostgreSQL preselects for this search (2 per
      // candidate, of the 50 a search reads at least), and as many as it ever preselected (400
      // at most), so a preselection blind to rarity leaves the rare ones out; and well under the
      // 2,000 rows past which it would leave the common word out of the preselection altogether.
      const { path, word } = fresh();
      const common = `${word}common`;
      const rare = `${word}rare`;
      for (let from = 0; from < 400; from += 100) {
        const entries = Array.from({ length: 100 }, (_, i) => ({ entity_path: path, key: `c${from + i}`, value: `${common} ${common} ${common} filler` }));
        const res = await server().call('POST', '/api/v1/entries/batch', { entries });
        expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      }
      for (const key of ['r1', 'r2', 'r3']) await write({ entity_path: path, key, value: `${rare} filler` });
      await expect.poll(async () => (await keys({ query: `${common} ${rare}`, mode: 'text', entity_path: path, limit: 3 })).sort(), { timeout: 10_000 }).toEqual(['r1', 'r2', 'r3']);
    });

    it('finds entries by a related word of the query, after those holding the word itself', async () => {
      // "doctor" expands to "physician" (the built-in lexicon). PostgreSQL preselects the rows
      // holding the query's own words first and asks for the expansions' rows only to fill what
      // is left: both steps must find them, within the path filter, and rank them after.
      const { path, word } = fresh();
      // Words in more than a tenth of the entries are not expanded: the related word must be rare.
      const filler = Array.from({ length: 40 }, (_, i) => ({ entity_path: path, key: `f${i}`, value: `the pilot filed the ${word} log ${i}` }));
      expect((await server().call('POST', '/api/v1/entries/batch', { entries: filler })).status).toBeLessThan(300);
      await write({ entity_path: path, key: 'own', value: `the doctor signed the ${word} report` });
      await write({ entity_path: path, key: 'related', value: `the physician signed the ${word} report` });
      await write({ entity_path: `search/elsewhere-${word}`, key: 'outside', value: `the physician signed the ${word} report` });
      await write({ entity_path: path, key: 'unrelated', value: `the pilot signed the ${word} report` });
      await expect.poll(async () => keys({ query: 'doctor', mode: 'text', entity_path: path }), { timeout: 10_000 }).toEqual(['own', 'related']);
    });

    it('finds entries by a related word where a common query word alone fills the first candidates', async () => {
      // A speaker's name on half the turns of a conversation: PostgreSQL's preselection of the
      // rows holding the query's own words fills with those, so it must also read the rows
      // holding a related word ("physician" for "doctor"), with the common word or without it.
      const { path, word } = fresh();
      const filler = Array.from({ length: 60 }, (_, i) => ({ entity_path: path, key: `f${i}`, value: `${word} said the weather on the coast was grey and windy again on day ${i}` }));
      expect((await server().call('POST', '/api/v1/entries/batch', { entries: filler })).status).toBeLessThan(300);
      await write({ entity_path: path, key: 'with-word', value: `${word} said the physician had moved the appointment to the end of the week` });
      await write({ entity_path: path, key: 'related-only', value: 'the physician called back' });
      // Both first, in either order: which of the two ranks higher turns on how common the
      // made-up word is in the whole store, which depends on the tests that ran before.
      await expect.poll(async () => (await keys({ query: `${word} doctor`, mode: 'text', entity_path: path, limit: 5 })).slice(0, 2).sort(), { timeout: 10_000 }).toEqual(['related-only', 'with-word']);
    });

    it('weighs a word a prefix of the query matches in full, even when another query word is related to it', async () => {
      // "doctor" expands to "physician", at a fraction of its weight; typed as `physic*` the
      // word is the caller's own. PostgreSQL weighed it as the related word, the in-process
      // index as the prefix's: the same entry scored differently on the two.
      const { path, word } = fresh();
      await write({ entity_path: path, key: 'physician', value: `${word} the physician notes` });
      await write({ entity_path: path, key: 'doctor', value: `${word} the doctor notes` });
      const textScore = async (query: string) => {
        const hit = (await search({ query, mode: 'text', entity_path: path })).find((h) => h.entry.key === 'physician');
        return (hit?.parts.text as { score: number } | null | undefined)?.score;
      };
      // Both asked with the same statistics: PostgreSQL reads them again once the writes are
      // indexed (after their vectors), which may fall between two searches made right after.
      await expect
        .poll(async () => {
          const alone = await textScore('physic*');
          const beside = await textScore('doctor physic*');
          return alone !== undefined && alone > 0 && beside !== undefined && Math.abs(beside - alone) < 1e-6;
        }, { timeout: 10_000 })
        .toBe(true);
    });

    it('finds an acronym the query spells out, and the words of one it writes in capitals', async () => {
      // The lexicon's acronyms (embed/acronyms.ts): "file transfer" is most of File Transfer
      // Protocol, so entries that write FTP match too, ranked as if they said those words;
      // CDN has one meaning, Content Delivery Network, whose words an entry may spell out.
      const { path, word } = fresh();
      await write({ entity_path: path, key: 'acronym', value: `the legacy FTP import for ${word} runs at 04:00` });
      await write({ entity_path: path, key: 'neither', value: `the legacy import for ${word} runs at 04:00` });
      await write({ entity_path: path, key: 'spelled', value: `purge ${word} assets from the content delivery network` });
      await expect.poll(async () => (await keys({ query: `${word} file transfer`, mode: 'text', entity_path: path }))[0], { timeout: 10_000 }).toBe('acronym');
      expect((await keys({ query: `${word} CDN`, mode: 'text', entity_path: path }))[0]).toBe('spelled');
      expect(await keys({ query: 'file transfer', mode: 'text', entity_path: path })).toEqual(['acronym']);
      expect(await keys({ query: 'CDN', mode: 'text', entity_path: path })).toEqual(['spelled']);
      // Written in lower case, an acronym is a word like any other ("cdn" may be a name).
      expect(await keys({ query: 'cdn', mode: 'text', entity_path: path })).toEqual([]);
    });

    it('finds a name written in parts (camelCase, kebab-case, snake_case) typed as one word, and the other way round', async () => {
      const { path, word } = fresh();
      await write({ entity_path: path, key: 'camel', value: `${word} added PgBouncer in transaction mode` });
      await write({ entity_path: path, key: 'snake', value: `${word} raised max_connections to 400` });
      await write({ entity_path: path, key: 'glued', value: `${word} the rollback of the payments release` });
      await write({ entity_path: path, key: 'neither', value: `${word} a bouncer at the door, a roll on the floor` });
      const found = (query: string) => keys({ query, mode: 'text', entity_path: path });
      await expect.poll(async () => found('pgbouncer'), { timeout: 10_000 }).toEqual(['camel']);
      expect(await found('maxconnections')).toEqual(['snake']);
      // Typed in parts, the name still finds its words, and the glued word the name typed whole.
      expect((await found('PgBouncer'))[0]).toBe('camel');
      expect((await found('roll-back'))[0]).toBe('glued');
      // In hybrid too (the default), where the word-by-word ranking matches the name either way.
      await expect.poll(async () => (await keys({ query: 'pgbouncer', entity_path: path }))[0], { timeout: 10_000 }).toBe('camel');
      // The highlight covers the whole name, whichever of its terms matched.
      const [hit] = await search({ query: 'pgbouncer', mode: 'text', entity_path: path });
      const fragment = hit?.highlights.find((h) => h.field === 'value');
      expect(fragment && fragment.matches.map(([s, e]) => fragment.fragment.slice(s, e))).toEqual(['PgBouncer']);
    });

    it('finds a word inside Chinese, Japanese and Korean text, which writes no spaces between words', async () => {
      const { path, word } = fresh();
      await write({ entity_path: path, key: 'zh', value: `${word} 昨天数据库连接失败了，需要重启 PgBouncer` });
      await write({ entity_path: path, key: 'ja', value: `${word} 本番環境のデータベース接続に失敗しました` });
      await write({ entity_path: path, key: 'ko', value: `${word} 데이터베이스 연결이 실패했습니다` });
      await write({ entity_path: path, key: 'other', value: `${word} 连接池已满 ログを確認 연락처` });
      const found = (query: string) => keys({ query, mode: 'text', entity_path: path, limit: 3 });
      await expect.poll(async () => found('数据库'), { timeout: 10_000 }).toEqual(['zh']);
      expect(await found('"连接失败"')).toEqual(['zh']);
      expect(await found('本番環境')).toEqual(['ja']);
      expect((await found('データベース'))[0]).toBe('ja');
      expect(await found('연결')).toEqual(['ko']);
      // In hybrid too (the default), and the highlight is the word asked for, whole.
      await expect.poll(async () => (await keys({ query: '数据库', entity_path: path }))[0], { timeout: 10_000 }).toBe('zh');
      const [hit] = await search({ query: '数据库', mode: 'text', entity_path: path, limit: 1 });
      const fragment = hit?.highlights.find((h) => h.field === 'value');
      expect(fragment && fragment.matches.map(([s, e]) => fragment.fragment.slice(s, e))).toEqual(['数据库']);
    });

    it('finds a misspelt word as the word one letter away that the searched entries hold, and says so', async () => {
      const { path, word } = fresh();
      await write({ entity_path: `${path}/a`, key: 'upgrade', value: `${word} the kubernetes upgrade moved every deployment to the new node pool` });
      await write({ entity_path: `${path}/a`, key: 'other', value: `${word} the checkout service timed out` });
      await write({ entity_path: `${path}/b`, key: 'certs', value: `${word} the certificate of the gateway expired` });
      const run = (query: string, more: Record<string, unknown> = {}) => server().call('POST', '/api/v1/search', { query, mode: 'text', entity_path: path, ...more });
      await expect.poll(async () => (await run('deploymnet pool')).body.results.map((r: Hit) => r.entry.key), { timeout: 10_000 }).toEqual(['upgrade']);
      expect((await run('deploymnet pool')).body.corrections).toEqual([{ typed: 'deploymnet', searched: 'deployment' }]);
      // In hybrid too, and a word spelt right is no correction.
      const hybrid = await run('the certficate', { mode: 'hybrid' });
      expect(hybrid.body.results[0]?.entry.key).toBe('certs');
      expect(hybrid.body.corrections).toEqual([{ typed: 'certficate', searched: 'certificate' }]);
      expect((await run('certificate')).body).not.toHaveProperty('corrections');
      // Only words of the lexicon are meant: a name one letter off is another name.
      expect((await run('kuberntes')).body).toMatchObject({ results: [] });
      expect((await run('kuberntes')).body).not.toHaveProperty('corrections');
      // Only what the search may return counts: below a path that lacks the word, none.
      const elsewhere = await run('deploymnet', { entity_path: `${path}/b` });
      expect(elsewhere.body.results).toEqual([]);
      expect(elsewhere.body).not.toHaveProperty('corrections');
      // Quoted words are searched as typed.
      expect((await run('"deploymnet pool"')).body).not.toHaveProperty('corrections');
    });

    it('finds a date written in ISO 8601 by its day and month, in words or in digits', async () => {
      const { path, word } = fresh();
      await write({ entity_path: path, key: 'deploy', value: { summary: `${word} rollout`, finished_at: '2026-11-20T10:05:00Z' } });
      await write({ entity_path: path, key: 'other-day', value: { summary: `${word} rollout`, finished_at: '2026-11-21T08:15:00Z' } });
      await write({ entity_path: path, key: 'other-month', value: { summary: `${word} rollout`, finished_at: '2026-10-20T10:05:00Z' } });
      await write({ entity_path: path, key: 'early', value: { summary: `${word} rollout`, finished_at: '2026-11-07T09:00:00Z' } });
      const first = async (query: string) => (await keys({ query, mode: 'text', entity_path: path, limit: 3 }))[0];
      await expect.poll(() => first(`${word} 20 November`), { timeout: 10_000 }).toBe('deploy');
      expect(await first(`${word} the 20th of november`)).toBe('deploy');
      expect(await first(`${word} 2026-11-20`)).toBe('deploy');
      expect(await first(`${word} October 20th`)).toBe('other-month');
      // A padded day is found by its number.
      expect(await first(`${word} the 7th of November`)).toBe('early');
      // An ordinal typed as a prefix finds its day too (it is indexed as its digits).
      expect(await first(`${word} the 21st* of november`)).toBe('other-day');
      // The month's name lights the date's month digits, the day its own.
      const [hit] = await search({ query: `${word} november 20`, mode: 'text', entity_path: path, limit: 1 });
      expect(hit?.entry.key).toBe('deploy');
      expect(hit?.highlights.find((h) => h.field === 'value.finished_at')).toEqual({ field: 'value.finished_at', fragment: '2026-11-20T10:05:00Z', matches: [[5, 7], [8, 10]] });
    });

    it('finds the month May by its name, not every entry that says "may"', async () => {
      const { path, word } = fresh();
      // Written first, and first by address: before "may" the verb stopped being a term, the
      // two tied for "in May" and this one ranked first.
      await write({ entity_path: path, key: 'a-verb', value: `${word} the rollout may slip a week` });
      await write({ entity_path: path, key: 'b-month', value: { summary: `${word} rollout`, finished_at: '2026-05-12T10:00:00Z' } });
      const first = async (query: string) => (await keys({ query, mode: 'text', entity_path: path, limit: 2 }))[0];
      await expect.poll(() => first(`${word} rollout in May`), { timeout: 10_000 }).toBe('b-month');
      expect(await first(`${word} rollout may 12`)).toBe('b-month');
      // The verb in a query is no term either: the one that says "slip" leads.
      expect(await first(`${word} what may slip`)).toBe('a-verb');
    });

    it('finds a number written in words by its digits, and the other way round', async () => {
      const { path, word } = fresh();
      await write({ entity_path: path, key: 'worded', value: `${word} retry three times, twenty seconds apart` });
      await write({ entity_path: path, key: 'digits', value: `${word} keep 7 days of logs` });
      await write({ entity_path: path, key: 'neither', value: `${word} retry a few times` });
      await write({ entity_path: path, key: 'clock', value: `${word} deploy freeze from 15:00 until 09:30` });
      const found = (query: string) => keys({ query, mode: 'text', entity_path: path, limit: 3 });
      await expect.poll(async () => (await found(`${word} 3 retries`))[0], { timeout: 10_000 }).toBe('worded');
      expect((await found(`${word} 20 seconds`))[0]).toBe('worded');
      expect((await found(`${word} seven days`))[0]).toBe('digits');
      // A clock hour finds the same hour written with a colon.
      expect((await found(`${word} 3pm`))[0]).toBe('clock');
      expect((await found(`${word} 9am`))[0]).toBe('clock');
      // A phrase finds the digits where the word stands, and the word where digits stand.
      expect(await found('"retry 3 times"')).toEqual(['worded']);
      expect(await found('"keep seven days"')).toEqual(['digits']);
      expect(await found('"freeze from 3pm"')).toEqual(['clock']);
      expect(await found('"15:00 until 9am"')).toEqual(['clock']);
    });

    it('matches phrases in order and prefixes', async () => {
      const { path, word } = fresh();
      await write({ entity_path: path, key: 'a', value: `${word} connection pool exhausted` });
      await write({ entity_path: path, key: 'b', value: `${word} pool of connections` });
      await expect.poll(async () => (await keys({ query: `${word.slice(0, -2)}*`, mode: 'text', entity_path: path })).sort(), { timeout: 5000 }).toEqual(['a', 'b']);
      expect(await keys({ query: `"connection pool"`, mode: 'text', entity_path: path })).toEqual(['a']);
      // A camelCase prefix is cut into words as the text was (OOMKilled: "oom", "kill"), so
      // `SigKill*` is a prefix of the "kill" of OOMKilled ("sig" is in no entry).
      await write({ entity_path: path, key: 'c', value: `${word} pods OOMKilled overnight` });
      await expect.poll(async () => keys({ query: 'SigKill*', mode: 'text', entity_path: path }), { timeout: 5000 }).toEqual(['c']);
      // A quote that holds no word (as typed into a search box, unclosed) is no phrase. Every
      // mode answers; vectors may still be on their way (PostgreSQL's indexer), so only the
      // modes with text are held to finding the entry.
      for (const mode of ['text', 'hybrid', 'vector']) {
        const found = await keys({ query: `${word} exhausted "`, mode, entity_path: path });
        if (mode !== 'vector') expect(found, mode).toContain('a');
        const onlyStopWords = await keys({ query: '"the"', mode, entity_path: path });
        if (mode === 'text') expect(onlyStopWords).toEqual([]);
      }
    });

    it('expands a prefix among the words of the entries it may return, not the commonest words of other paths and namespaces', async () => {
      const { path, word } = fresh();
      const stem = word.slice(0, -1);
      // 70 words of the prefix elsewhere, each more common than the one word in the searched path.
      const many = Array.from({ length: 70 }, (_, i) => `${stem}w${i.toString(36)}`);
      const batch = (namespace?: string) => ({
        ...(namespace ? { namespace } : {}),
        entries: Array.from({ length: 3 }, (_, copy) => ({ entity_path: `${path}/busy`, key: `busy-${copy}`, value: many.join(' ') })),
      });
      expect((await server().call('POST', '/api/v1/entries/batch', batch())).status).toBe(200);
      expect((await server().call('POST', '/api/v1/entries/batch', batch('search-other'))).status).toBe(200);
      await write({ entity_path: `${path}/quiet`, key: 'rare', value: `${stem}rare once` });
      await write({ namespace: 'search-prefix', entity_path: path, key: 'alone', value: `${stem}zz alone here` });
      await expect.poll(() => keys({ query: `${stem}*`, mode: 'text', entity_path: `${path}/quiet` }), { timeout: 5000 }).toEqual(['rare']);
      expect(await keys({ query: `${stem}*`, mode: 'text', namespace: 'search-prefix' })).toEqual(['alone']);
    });

    it('never returns deleted, expired or superseded content, and filters by path, agent, type, confidence and time', async () => {
      const { path, word } = fresh();
      const old = await write({ entity_path: `${path}/a`, key: 'one', value: `${word} first words`, agent_id: 'bot-a', event_type: 'x.y', confidence: 0.4 });
      await write({ entity_path: `${path}/a`, key: 'one', value: `${word} second text`, agent_id: 'bot-a', event_type: 'x.y', confidence: 0.4 });
      await write({ entity_path: `${path}/a-corp`, key: 'two', value: `${word} sibling path`, agent_id: 'bot-b' });
      await write({ entity_path: `${path}/a/deep`, key: 'three', value: `${word} deeper` });
      await write({ entity_path: path, key: 'gone', value: `${word} deleted soon` });
      await write({ entity_path: path, key: 'brief', value: `${word} expiring`, ttl_seconds: 1 });
      expect((await server().call('DELETE', `/api/v1/entries/${path}/gone`)).status).toBe(204);
      const all = { query: word, entity_path: path, limit: 50 };
      await expect.poll(async () => (await keys({ ...all, mode: 'text' })).sort(), { timeout: 5000 }).toEqual(['brief', 'one', 'three', 'two']);
      expect(await keys({ query: 'first', entity_path: path, mode: 'text' })).toEqual([]);
      expect((await search({ ...all, mode: 'text', agent_id: 'bot-a' }))[0]?.entry.version).toBe(2);
      expect((await keys({ ...all, entity_path: `${path}/a` })).sort()).toEqual(['one', 'three']);
      expect(await keys({ ...all, agent_id: 'bot-b' })).toEqual(['two']);
      expect(await keys({ ...all, event_type: 'x.y' })).toEqual(['one']);
      expect((await keys({ ...all, min_confidence: 0.5 })).sort()).toEqual(['brief', 'three', 'two']);
      expect(await keys({ ...all, since: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
      expect(old.version).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      for (const mode of ['text', 'vector', 'hybrid']) expect(await keys({ ...all, mode })).not.toContain('brief');
      expect(await keys({ ...all, mode: 'vector' })).not.toContain('gone');
      // Without a path the filter is the namespace and liveness alone, which the in-process
      // index answers without reading entries that cannot expire: this one can, and has.
      expect((await keys({ query: word, limit: 50, mode: 'text' })).sort()).toEqual(['one', 'three', 'two']);
      for (const mode of ['vector', 'hybrid']) expect(await keys({ query: word, limit: 50, mode })).not.toContain('brief');
    });

    it('keeps namespaces apart', async () => {
      const { path, word } = fresh();
      await write({ namespace: 'search-other', entity_path: path, key: 'elsewhere', value: `${word} in another namespace` });
      await write({ entity_path: path, key: 'here', value: `${word} in the default namespace` });
      await expect.poll(() => keys({ query: word, mode: 'hybrid', entity_path: path }), { timeout: 5000 }).toEqual(['here']);
      // Hybrid answers by text until the vectors are in; on PostgreSQL they come a moment after
      // the commit (its indexer embeds in batches): the checks by vector below wait for them.
      await expect.poll(() => keys({ query: word, mode: 'vector', limit: 50, namespace: 'search-other' }), { timeout: 5000 }).toContain('elsewhere');
      expect(await keys({ query: word, mode: 'text', namespace: 'search-other' })).toEqual(['elsewhere']);
      // By the namespace alone, in each mode: the same text in the other namespace never shows.
      for (const mode of ['text', 'vector', 'hybrid']) {
        const here = await keys({ query: word, mode, limit: 50 });
        expect(here, mode).not.toContain('elsewhere');
        const there = await keys({ query: word, mode, limit: 50, namespace: 'search-other' });
        expect(there, mode).toContain('elsewhere');
        expect(there, mode).not.toContain('here');
      }
    });

    it('finds entries by meaning with vectors and fuses both rankings in hybrid', async () => {
      const { path } = fresh();
      await write({ entity_path: path, key: 'outage', value: 'The payments database was down for an hour after a failed failover' });
      await write({ entity_path: path, key: 'lunch', value: 'Team lunch on Friday at the pizza place' });
      await expect.poll(() => keys({ query: 'database downtime', mode: 'vector', entity_path: path, limit: 1 }), { timeout: 5000 }).toEqual(['outage']);
      const hybrid = await search({ query: 'database outage', entity_path: path });
      expect(hybrid[0]?.entry.key).toBe('outage');
      expect(hybrid[0]?.parts.text?.rank).toBe(1);
      expect(hybrid[0]?.parts.vector?.rank).toBe(1);
    });

    it.skipIf(sampledStatistics)('scores by the current versions alone, however often an entry was rewritten', async () => {
      const { path, word } = fresh();
      const texts = { a: `${word} rollback procedure for the api`, b: `${word} rollback procedure for the web`, c: `${word} notes` };
      for (const [key, value] of Object.entries(texts)) await write({ entity_path: path, key, value, confidence: 0.9 });
      const textScores = async () =>
        new Map((await search({ query: `${word} rollback procedure`, mode: 'text', entity_path: path })).map((h) => [h.entry.key, (h.parts.text as unknown as { score: number }).score]));
      const before = await textScores();
      // New versions of one entry, its text unchanged: the words of the versions it replaced
      // must not count as more documents holding them (they once made them look common).
      for (let i = 0; i < 6; i++) await write({ entity_path: path, key: 'a', value: texts.a, confidence: 0.5 + i / 20 });
      const after = await textScores();
      expect([...after.keys()].sort()).toEqual(['a', 'b', 'c']);
      for (const key of ['a', 'b', 'c']) expect(after.get(key), key).toBeCloseTo(before.get(key) as number, 6);
    });

    it('answers a query of no word (only emoji or punctuation) with nothing, in every mode', async () => {
      const { path } = fresh();
      await write({ entity_path: path, key: 'outage', value: 'The payments database was down for an hour' });
      await expect.poll(() => keys({ query: 'database', mode: 'vector', entity_path: path }), { timeout: 5000 }).toEqual(['outage']);
      for (const query of ['😀', '***', '🙂🙃 -']) {
        for (const mode of ['vector', 'hybrid', 'text']) expect(await search({ query, mode, entity_path: path }), `${mode} ${query}`).toEqual([]);
      }
    });

    it('fills the page past discredited entries that rank first, and briefs on every judged entry', async () => {
      // Discredited entries are set aside after ranking: when the best matches are all
      // discredited (a failed approach tried again and again), the rankings must be read deeper
      // rather than answering a short page, or none.
      const { path, word } = fresh();
      const outcomes = async (entries: { entity_path: string; key: string }[]) => {
        for (let round = 0; round < 2; round++) {
          for (let from = 0; from < entries.length; from += 100) {
            const res = await server().call('POST', '/api/v1/outcomes', { entries: entries.slice(from, from + 100), outcome: 'failure' });
            expect(res.status, JSON.stringify(res.body)).toBe(200);
          }
        }
      };
      // Six matches, the four best discredited.
      const few = `${path}/few`;
      for (let i = 0; i < 4; i++) await write({ entity_path: few, key: `bad${i}`, value: `${word} ${word}` });
      for (let i = 0; i < 2; i++) await write({ entity_path: few, key: `good${i}`, value: `${word} and a note of many more words than the others, padding it out ${i}` });
      await outcomes(Array.from({ length: 4 }, (_, i) => ({ entity_path: few, key: `bad${i}` })));
      for (const mode of ['text', 'hybrid']) {
        expect(await keys({ query: word, mode, entity_path: few, limit: 1 }), mode).toHaveLength(1);
        expect((await keys({ query: word, mode, entity_path: few, limit: 2 })).sort(), mode).toEqual(['good0', 'good1']);
      }
      const apart = (await server().call('POST', '/api/v1/search', { query: word, mode: 'text', entity_path: few, limit: 2, discredited: 'apart' })).body;
      expect(apart.results.map((h: Hit) => h.entry.key).sort()).toEqual(['good0', 'good1']);
      expect(apart.tried_and_failed.map((h: Hit) => h.entry.key).sort()).toEqual(['bad0', 'bad1']);

      // 250 discredited matches, more than a search reads at first, then three good ones.
      const many = `${path}/many`;
      const good = Array.from({ length: 3 }, (_, i) => ({ entity_path: many, key: `good${i}`, value: `${word} and a note of many more words than the others, padding it out ${i}` }));
      const bad = Array.from({ length: 250 }, (_, i) => ({ entity_path: `${many}/p${i}`, key: 'k', value: `${word} ${word}` }));
      for (const entries of [good, bad.slice(0, 100), bad.slice(100, 200), bad.slice(200)]) {
        const res = await server().call('POST', '/api/v1/entries/batch', { entries });
        expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      }
      await outcomes(bad.map(({ entity_path, key }) => ({ entity_path, key })));
      for (const mode of ['text', 'hybrid']) expect((await keys({ query: word, mode, entity_path: many, limit: 10 })).sort(), mode).toEqual(['good0', 'good1', 'good2']);
      expect(await keys({ query: word, mode: 'text', entity_path: many, limit: 10, discredited: 'include' })).toHaveLength(10);

      // The briefing names every judged entry of its scope, however many the namespace holds.
      const brief = async (scope: string, discredited = 'hide') => {
        const res = await server().call('GET', `/api/v1/briefing?entity_path=${scope}&discredited=${discredited}&limit=100&max_chars=200000`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body as { recent_changes: { key: string; entity_path: string }[]; tried_and_failed?: { entity_path: string }[] };
      };
      expect((await brief(many)).recent_changes.map((c) => c.key).sort()).toEqual(['good0', 'good1', 'good2']);
      expect((await brief(many, 'apart')).tried_and_failed).toHaveLength(100);
      for (const i of [0, 99, 150, 200, 249]) {
        const one = await brief(`${many}/p${i}`, 'apart');
        expect(one.tried_and_failed?.map((c) => c.entity_path), `p${i}`).toEqual([`${many}/p${i}`]);
        expect(one.recent_changes, `p${i}`).toEqual([]);
      }
      // 500 outcomes recorded one entry at a time: on S3, beside the rest of a suite, near 30 s.
    }, 90_000);

    it('as of a past instant, corrects spelling by the words of that instant', async () => {
      const { path, word } = fresh();
      const pause = () => new Promise((resolve) => setTimeout(resolve, 50));
      await write({ entity_path: path, key: 'typo', value: `${word} the rollbak procedure for payments` });
      await write({ entity_path: path, key: 'drill', value: `${word} rollback drill notes` });
      await write({ entity_path: path, key: 'upgrade', value: `${word} every deployment moved to the new node pool` });
      await pause();
      const then = new Date().toISOString();
      await pause();
      await write({ entity_path: path, key: 'typo', value: `${word} the procedure for payments, revised` });
      await write({ entity_path: path, key: 'upgrade', value: `${word} every node moved to the new pool` });
      const run = async (query: string) => (await server().call('POST', '/api/v1/search', { query, mode: 'text', entity_path: path, as_of: then })).body;
      // Held then, though no longer: searched as typed.
      const typed = await run('rollbak');
      expect(typed.results.map((h: Hit) => `${h.entry.key}@${h.entry.version}`)).toEqual(['typo@1']);
      expect(typed).not.toHaveProperty('corrections');
      // A slip for a word held then, though no longer: corrected to it.
      const slip = await run('deploymnet');
      expect(slip.results.map((h: Hit) => `${h.entry.key}@${h.entry.version}`)).toEqual(['upgrade@1']);
      expect(slip.corrections).toEqual([{ typed: 'deploymnet', searched: 'deployment' }]);
    });

    it('refuses bad input with 422 naming the field', async () => {
      for (const [body, field] of [
        [{}, 'query'],
        [{ query: 'x', mode: 'fuzzy' }, 'mode'],
        [{ query: 'x', limit: 1000 }, 'limit'],
        [{ query: 'x', min_confidence: 2 }, 'min_confidence'],
        [{ query: 'x', entity_path: '/bad/' }, 'entity_path'],
        [{ query: 'x', since: 'yesterday' }, 'since'],
        [{ query: 'x', colour: 'red' }, 'colour'],
      ] as const) {
        const res = await server().call('POST', '/api/v1/search', body);
        expect(res.status).toBe(422);
        expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
      }
      // Text that is no instant at all is one error, not three (the year checks had their say too).
      for (const field of ['since', 'as_of']) {
        const res = await server().call('POST', '/api/v1/search', { query: 'x', [field]: 'yesterday' });
        expect(res.status).toBe(422);
        expect(res.body.error.details, JSON.stringify(res.body)).toEqual([{ field, message: expect.stringContaining('ISO 8601') }]);
      }
    });
  });
};

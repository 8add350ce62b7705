import { randomBytes } from 'node:crypto';
import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isOutage, isUniqueViolation, toServiceError } from '../../packages/server/src/store/postgres/db-errors.ts';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';

/**
 * How the store classifies what the driver throws, over errors a real server and real sockets
 * produced. A socket's errno name can look like a SQLSTATE (EPIPE is five capitals): taken for
 * one, a closed socket was "an unexpected postgres error" logged with its stack, and not an
 * outage, so a coalesced statement was re-run item by item against a dead connection.
 */
let pg: TestPostgres;
let admin: postgres.Sql;
beforeAll(async () => {
  pg = await startPostgres();
  admin = postgres(pg.dsn, { max: 2, onnotice: () => {} });
  await admin`create table kv (k text primary key)`;
});
afterAll(async () => {
  await admin?.end();
  await pg?.stop();
});

/** A logger that keeps what it was told, by level. */
const recording = () => {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
  return { logger, errors: () => lines.filter((l) => l.level >= 50) };
};

/** The error of a statement on a connection that the server ends while the statement is being sent or run. */
const killedMidStatement = async (bigParameter: boolean): Promise<unknown> => {
  const name = `victim_${Math.random().toString(36).slice(2)}`;
  const victim = postgres(pg.dsn, { max: 1, onnotice: () => {}, connection: { application_name: name } });
  try {
    await victim`select 1`;
    const query = (bigParameter ? victim`select length(${'x'.repeat(16 * 1024 * 1024)}::text)` : victim`select pg_sleep(30)`).then(
      () => null,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, bigParameter ? 5 : 200));
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${name}`;
    return await query;
  } finally {
    await victim.end({ timeout: 0 }).catch(() => {});
  }
};

describe('postgres error classification', () => {
  it('takes socket errors (EPIPE, ECONNRESET) and a terminated session for outages, logged quietly', async () => {
    // Node's own error for a write to a socket the server closed (seen from the driver as is).
    const epipe = Object.assign(new Error('write EPIPE'), { errno: -32, code: 'EPIPE', syscall: 'write' });
    const real = [await killedMidStatement(true), await killedMidStatement(true), await killedMidStatement(false)];
    for (const error of [epipe, ...real]) {
      expect(error).toBeInstanceOf(Error);
      const { logger, errors } = recording();
      expect(isOutage(error), String(error)).toBe(true);
      const refused = toServiceError(error, 'read', logger);
      expect(refused.code, String(error)).toBe('UNAVAILABLE');
      expect(errors(), String(error)).toEqual([]);
    }
  });

  it('keeps SQLSTATEs of server errors: a unique violation, a data exception, an index entry too large', async () => {
    await admin`insert into kv values ('a')`;
    const duplicate = await admin`insert into kv values ('a')`.catch((e: unknown) => e);
    expect(isUniqueViolation(duplicate)).toBe(true);
    expect(isOutage(duplicate)).toBe(false);

    const bad = await admin`select ${'nope'}::int`.catch((e: unknown) => e);
    expect(toServiceError(bad, 'read', recording().logger).code).toBe('VALIDATION_FAILED');

    // A btree entry over 2,704 bytes (incompressible): the same statement fails the same way
    // every time, so it is not "unavailable; retry shortly" (503) but the request's size.
    const tooLong = await admin`insert into kv values (${randomBytes(3000).toString('base64')})`.catch((e: unknown) => e);
    expect((tooLong as { code?: string }).code).toBe('54000');
    expect(isOutage(tooLong)).toBe(false);
    const { logger, errors } = recording();
    const refused = toServiceError(tooLong, 'createRecord', logger);
    expect(refused.code).toBe('PAYLOAD_TOO_LARGE');
    expect(refused.message).toMatch(/2704/);
    expect(errors()).toEqual([]);
  });
});

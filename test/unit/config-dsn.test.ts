import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { cortexHealth } from '../../packages/server/src/cortex/health.ts';
import { redactCredentials } from '../../packages/server/src/domain/redact-credentials.ts';
import { serializeError } from '../../packages/server/src/http/logger.ts';

// A connection string is a secret: a malformed one is refused at start with a message that
// says what is wrong and never repeats its password, and errors logged at start-up do not
// carry it either (an invalid URL's `input`).

const message = (env: Record<string, string>): string => {
  try {
    parseConfig(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('accepted');
};

describe('CAIRN_DB_DSN', () => {
  it.each([
    // base64 passwords (`openssl rand -base64`) hold / + =
    ['an unescaped "/"', 'postgres://cairn:ab/cd+ef=@db.internal:5432/cairn', 'ab/cd+ef='],
    // would silently connect to host "ss"
    ['an unescaped "@" and "#"', 'postgres://cairn:p@ss#word@db.internal:5432/cairn', 'p@ss#word'],
    // parses, as host "cairn" port 12 and database "cd@db.internal/cairn"
    ['a "/" after digits', 'postgres://cairn:12/cd@db.internal/cairn', '12/cd'],
    ['no host', 'postgres://cairn:hunter2hunter2@/cairn', 'hunter2hunter2'],
  ])('refuses a DSN with %s, naming the variable, never its password', (_, dsn, password) => {
    const text = message({ CAIRN_DB_DSN: dsn });
    expect(text).toMatch(/^invalid configuration:\n {2}CAIRN_DB_DSN: /);
    expect(text).not.toContain(password);
    expect(text).not.toContain(dsn);
  });

  it('says how to fix an unescaped password and shows the DSN with the password masked', () => {
    const text = message({ CAIRN_DB_DSN: 'postgres://cairn:ab/cd+ef=@db.internal:5432/cairn' });
    expect(text).toContain('percent-encode');
    expect(text).toContain('postgres://cairn:***@db.internal:5432/cairn');
  });

  it('does not show query parameters, which may hold secrets', () => {
    const text = message({ CAIRN_DB_DSN: 'postgres://cairn:x#y@h/db?password=topsecret' });
    expect(text).not.toContain('topsecret');
  });

  it.each([
    'postgres://cairn:ab%2Fcd%2Bef%3D@db.internal:5432/cairn',
    'postgresql://cairn@db.internal/cairn',
    'postgres://u:p@h1:5432,h2:5432/db',
    'postgres://u:p@h/db?sslmode=require',
  ])('accepts %s', (dsn) => {
    expect(parseConfig({ CAIRN_DB_DSN: dsn }).storage).toMatchObject({ backend: 'postgres', dsn });
  });
});

describe('errors logged at start-up', () => {
  it('drop an invalid URL\'s input and mask URL passwords', () => {
    let invalid: unknown;
    try {
      new URL('postgres://cairn:ab/cd+ef=@db.internal:5432/cairn');
    } catch (error) {
      invalid = error;
    }
    expect((invalid as { input?: string }).input).toContain('ab/cd+ef=');
    const serialized = JSON.stringify(serializeError(invalid));
    expect(serialized).toContain('Invalid URL');
    expect(serialized).not.toContain('ab/cd+ef=');
    const wrapped = JSON.stringify(serializeError(new Error('opening postgres://cairn:s3cret@h/db', { cause: new Error('postgres://a:b3secret@c') })));
    expect(wrapped).toContain('postgres://cairn:***@h/db');
    expect(wrapped).not.toMatch(/s3cret|b3secret/);
    expect(redactCredentials('see https://user:pw@example.com/x and https://example.com')).toBe('see https://user:***@example.com/x and https://example.com');
  });

  it('cairn cortex --health answers unhealthy, without a secret, when the backend cannot even be opened', async () => {
    // Past the configuration step (a config built by hand): the check still answers, not throws.
    const config = { ...parseConfig({}), storage: { backend: 'postgres', dsn: 'postgres://cairn:ab/cd+ef=@db.internal:5432/cairn', searchIndex: 'postgres' } } as unknown as Parameters<typeof cortexHealth>[0];
    const verdict = await cortexHealth(config, Date.now);
    expect(verdict.ok).toBe(false);
    expect(verdict.message).toContain('cannot open the postgres backend');
    expect(verdict.message).not.toContain('ab/cd+ef=');
  });
});

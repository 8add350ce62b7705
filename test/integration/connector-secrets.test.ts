import { afterAll, expect, it } from 'vitest';
import { dumpBackend } from '../helpers/backend-dump.ts';
import { filesystemBackend, postgresBackend } from '../helpers/backend-env.ts';
import { startCairn } from '../helpers/cairn.ts';

/**
 * Connector signing secrets at rest: the records hold only ciphertext; a server refuses to
 * start without the key once secrets exist, or with a key that does not open them; a
 * rotation (new key, old one as previous) re-encrypts what it reads, after which the old key
 * can go. Same on every backend, since secrets are shared records.
 */
const OLD = 'old-secret-key-0123456789abcdef';
const NEW = 'new-secret-key-0123456789abcdef';

for (const [name, backend] of [['filesystem', filesystemBackend('secrets')], ['postgres', postgresBackend('secrets')]] as const) {
  afterAll(() => backend.cleanup());

  it(`keeps connector signing secrets encrypted at rest and rotates the key (${name})`, async () => {
    const env = await backend.env();
    let cairn = await startCairn({ ...env, CAIRN_SECRET_KEY: '' });
    const refused = await cairn.call('POST', '/api/v1/connectors/github/enable', {});
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('CAIRN_SECRET_KEY');
    await cairn.close();

    cairn = await startCairn({ ...env, CAIRN_SECRET_KEY: OLD });
    const enabled = await cairn.call('POST', '/api/v1/connectors/github/enable', {});
    expect(enabled.status, JSON.stringify(enabled.body)).toBeLessThan(300);
    const secret = enabled.body.signing_secret as string;
    expect(secret).toMatch(/^whsec_/);
    await cairn.close();
    const stored = await dumpBackend(env);
    expect(stored).not.toContain(secret.slice(6));
    expect(stored).toContain('A256GCM');

    await expect(startCairn({ ...env, CAIRN_SECRET_KEY: '' })).rejects.toThrow(/CAIRN_SECRET_KEY is not set/);
    await expect(startCairn({ ...env, CAIRN_SECRET_KEY: NEW })).rejects.toThrow(/CAIRN_SECRET_KEY_PREVIOUS/);

    // Rotation: the new key, with the old one as previous; reading the connector re-encrypts it.
    cairn = await startCairn({ ...env, CAIRN_SECRET_KEY: NEW, CAIRN_SECRET_KEY_PREVIOUS: OLD });
    const listed = await cairn.call('GET', '/api/v1/connectors');
    expect(JSON.stringify(listed.body)).toContain('"has_signing_secret":true');
    await cairn.close();
    cairn = await startCairn({ ...env, CAIRN_SECRET_KEY: NEW });
    const rotated = await cairn.call('POST', '/api/v1/connectors/github/rotate-secret', {});
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    await cairn.close();
    expect(await dumpBackend(env)).not.toContain((rotated.body.signing_secret as string).slice(6));
  }, 60_000);
}

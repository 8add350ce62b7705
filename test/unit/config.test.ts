import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../packages/server/src/config.ts';

describe('configuration', () => {
  it('has the SPEC §2 defaults', () => {
    expect(parseConfig({})).toMatchObject({
      port: 8080, host: '127.0.0.1', storage: { backend: 'filesystem', dataDir: '/data/.cairn' },
      apiKeys: [], agentId: 'cairn-server', namespace: 'default', cortexDebounceMs: 3000, rateLimitRpm: 6000,
    });
  });

  it('selects the backend from CAIRN_DB_DSN or CAIRN_OBJECT_BUCKET and refuses both', () => {
    expect(parseConfig({ CAIRN_DB_DSN: 'postgres://u@h/db' }).storage).toEqual({ backend: 'postgres', dsn: 'postgres://u@h/db', searchIndex: 'postgres' });
    expect(parseConfig({ CAIRN_DB_DSN: 'postgres://u@h/db', CAIRN_SEARCH_INDEX: 'memory' }).storage).toMatchObject({ backend: 'postgres', searchIndex: 'memory' });
    expect(() => parseConfig({ CAIRN_DB_DSN: 'postgres://u@h/db', CAIRN_SEARCH_INDEX: 'ram' })).toThrow(/CAIRN_SEARCH_INDEX: expected postgres \(the default: search in the database\) or memory/);
    expect(parseConfig({ CAIRN_OBJECT_BUCKET: 'my-bucket', CAIRN_OBJECT_PREFIX: 'team-a' }).storage).toEqual({
      backend: 's3', bucket: 'my-bucket', endpoint: undefined, prefix: 'team-a/', region: 'us-east-1', pollIntervalMs: 300, maxPollIntervalMs: 5000,
    });
    // The change log's poll: a base interval, and the idle ceiling, never below it.
    expect(parseConfig({ CAIRN_OBJECT_BUCKET: 'my-bucket', CAIRN_OBJECT_POLL_MS: '1000', CAIRN_OBJECT_POLL_MAX_MS: '60000' }).storage).toMatchObject({ pollIntervalMs: 1000, maxPollIntervalMs: 60_000 });
    expect(parseConfig({ CAIRN_OBJECT_BUCKET: 'my-bucket', CAIRN_OBJECT_POLL_MS: '2000', CAIRN_OBJECT_POLL_MAX_MS: '500' }).storage).toMatchObject({ pollIntervalMs: 2000, maxPollIntervalMs: 2000 });
    expect(() => parseConfig({ CAIRN_OBJECT_BUCKET: 'my-bucket', CAIRN_OBJECT_POLL_MS: '10' })).toThrow(/CAIRN_OBJECT_POLL_MS: expected at least 50/);
    expect(() => parseConfig({ CAIRN_DB_DSN: 'postgres://u@h/db', CAIRN_OBJECT_BUCKET: 'my-bucket' })).toThrow(/both set/);
    // A prefix that would make a long record's key pass AWS's 1,024 bytes (record-objects.ts).
    expect(parseConfig({ CAIRN_OBJECT_BUCKET: 'my-bucket', CAIRN_OBJECT_PREFIX: 'é'.repeat(117) }).storage).toMatchObject({ backend: 's3' });
    expect(() => parseConfig({ CAIRN_OBJECT_BUCKET: 'my-bucket', CAIRN_OBJECT_PREFIX: 'a'.repeat(235) })).toThrow(/CAIRN_OBJECT_PREFIX: expected at most 234 bytes/);
  });

  it('names every bad variable and what it expects', () => {
    try {
      parseConfig({ CAIRN_PORT: '99999', CAIRN_CORTEX_DEBOUNCE_MS: 'soon', CAIRN_DB_DSN: 'mysql://x', CAIRN_API_KEYS: 'short' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).toContain('CAIRN_PORT: expected at most 65535');
      expect(message).toContain('CAIRN_CORTEX_DEBOUNCE_MS: expected a whole number');
      expect(message).toContain('CAIRN_DB_DSN: expected a postgres:// connection string');
      expect(message).toContain('CAIRN_API_KEYS: each key must be at least 8 characters');
    }
  });

  it('reads a local model with its cache and hub, and refuses a hub that is not a URL', () => {
    expect(parseConfig({ CAIRN_EMBEDDINGS_MODEL: 'BAAI/bge-small-en-v1.5', XDG_CACHE_HOME: '/var/cache/u' })).toMatchObject({
      embeddingsUrl: undefined, embeddingsModel: 'BAAI/bge-small-en-v1.5', modelCache: '/var/cache/u/cairn/models', modelHubUrl: 'https://huggingface.co',
    });
    expect(parseConfig({ CAIRN_EMBEDDINGS_MODEL: './models/minilm', CAIRN_MODEL_CACHE: '/models', CAIRN_MODEL_HUB_URL: 'http://mirror:8080' })).toMatchObject({
      modelCache: '/models', modelHubUrl: 'http://mirror:8080',
    });
    expect(() => parseConfig({ CAIRN_MODEL_HUB_URL: 'huggingface.co' })).toThrow(/CAIRN_MODEL_HUB_URL: expected an http\(s\) URL/);
  });

  it('keeps the lexicon beside a sentence model unless told off, and refuses other words', () => {
    expect(parseConfig({}).searchLexicon).toBe(true);
    expect(parseConfig({ CAIRN_SEARCH_LEXICON: 'off' }).searchLexicon).toBe(false);
    expect(() => parseConfig({ CAIRN_SEARCH_LEXICON: 'no' })).toThrow(/CAIRN_SEARCH_LEXICON: expected on \(the default\) or off/);
  });

  it('bounds receiving a request by CAIRN_REQUEST_TIMEOUT_MS, 30 s unless set, and refuses a value under a second', () => {
    expect(parseConfig({}).requestTimeoutMs).toBe(30_000);
    expect(parseConfig({ CAIRN_REQUEST_TIMEOUT_MS: '2000' }).requestTimeoutMs).toBe(2000);
    expect(() => parseConfig({ CAIRN_REQUEST_TIMEOUT_MS: '999' })).toThrow(/CAIRN_REQUEST_TIMEOUT_MS: expected at least 1000/);
    expect(() => parseConfig({ CAIRN_REQUEST_TIMEOUT_MS: '0' })).toThrow(/CAIRN_REQUEST_TIMEOUT_MS: expected at least 1000/);
    expect(() => parseConfig({ CAIRN_REQUEST_TIMEOUT_MS: '30s' })).toThrow(/CAIRN_REQUEST_TIMEOUT_MS: expected a whole number/);
    expect(() => parseConfig({ CAIRN_REQUEST_TIMEOUT_MS: '3600001' })).toThrow(/CAIRN_REQUEST_TIMEOUT_MS: expected at most 3600000/);
  });

  it('lets flags win over the environment and reads lists and connector secrets', () => {
    const config = parseConfig(
      { CAIRN_PORT: '9000', CAIRN_API_KEYS: ' key-aaaaaaaa , key-bbbbbbbb ,', CAIRN_CONNECTOR_GITHUB_SECRET: 's3cr3t', CAIRN_CONNECTOR_SLACK_CHANNELS: 'C1,C2' },
      { port: '9100', dataDir: './here' },
    );
    expect(config).toMatchObject({ port: 9100, storage: { dataDir: './here' }, apiKeys: ['key-aaaaaaaa', 'key-bbbbbbbb'], connectorSecrets: { github: 's3cr3t' }, slackChannels: ['C1', 'C2'] });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty variables as unset', () => {
    expect(parseConfig({ CAIRN_DB_DSN: '', CAIRN_PORT: '' })).toMatchObject({ storage: { backend: 'filesystem' }, port: 8080 });
  });
});

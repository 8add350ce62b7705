import { z } from 'zod';
import { integer, optionalText } from '../../domain/env-values.ts';
import type { BackendCapabilities, OpenBackend } from '../../ports/backend.ts';
import { defineBackend } from '../backend-module.ts';

/**
 * S3-compatible object storage: replicas share the bucket and follow each other through its
 * change log; each searches with its own in-process index; the Cortex's lease is an object
 * taken with a conditional put. Credentials come from the AWS SDK's default chain.
 */
// Each audit batch is a PUT: a request billed on its own and tens of milliseconds long, as long
// as the write it records. With a 10 ms window nearly every write made one at a time stored its
// own batch (0.9 PUTs a write beside its two or three); a quarter second gathers several.
const CAPABILITIES: BackendCapabilities = { sharedAcrossReplicas: true, readsOverNetwork: true, auditWindowMs: 250 };

export const s3Backend = defineBackend({
  name: 's3',
  capabilities: CAPABILITIES,
  selectedBy: 'CAIRN_OBJECT_BUCKET',
  env: {
    CAIRN_OBJECT_BUCKET: optionalText.pipe(z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { error: 'expected an S3 bucket name' }).optional()),
    CAIRN_OBJECT_ENDPOINT: optionalText.pipe(z.url({ error: 'expected an http(s) URL' }).optional()),
    // Keys must stay within AWS's 1,024 bytes: the longest Cairn makes (a record of a long id,
    // record-objects.ts) is 789 bytes past the prefix and its "/".
    CAIRN_OBJECT_PREFIX: z
      .string()
      .refine((p) => Buffer.byteLength(p, 'utf8') <= 234, { error: 'expected at most 234 bytes (object keys stay within S3\'s 1,024)' })
      .default('cairn/'),
    // Each poll of the change log is a LIST request: at the base interval while replicas write,
    // doubling up to the ceiling while polls find nothing (how late an idle replica hears of
    // another's write unasked; lists and reads catch up on demand whatever these are).
    CAIRN_OBJECT_POLL_MS: integer(50, 60_000, 300),
    CAIRN_OBJECT_POLL_MAX_MS: integer(50, 3_600_000, 5000),
    AWS_REGION: z.string().regex(/^[a-z0-9-]{2,32}$/, { error: 'expected an AWS region such as us-east-1' }).default('us-east-1'),
  },
  settings: (env) => ({
    // Selected only when the bucket is set, so it is there whenever these settings are used.
    bucket: env.CAIRN_OBJECT_BUCKET ?? '',
    endpoint: env.CAIRN_OBJECT_ENDPOINT,
    // `cairn` and `cairn/` both mean the folder `cairn/`.
    prefix: env.CAIRN_OBJECT_PREFIX === '' || env.CAIRN_OBJECT_PREFIX.endsWith('/') ? env.CAIRN_OBJECT_PREFIX : `${env.CAIRN_OBJECT_PREFIX}/`,
    region: env.AWS_REGION,
    pollIntervalMs: env.CAIRN_OBJECT_POLL_MS,
    maxPollIntervalMs: Math.max(env.CAIRN_OBJECT_POLL_MS, env.CAIRN_OBJECT_POLL_MAX_MS),
  }),
  open: async (settings, logger): Promise<OpenBackend> => {
    const [{ openS3Store }, { s3Objects }, { LeaseObjects }, { openMemorySearch }] = await Promise.all([
      import('./index.ts'),
      import('./s3-records.ts'),
      import('./lease-objects.ts'),
      import('../../search/open-memory-search.ts'),
    ]);
    const store = await openS3Store({ ...settings, logger });
    return {
      name: 's3',
      capabilities: CAPABILITIES,
      store,
      openLease: async (holder) => {
        const { objects, prefix } = s3Objects(settings);
        return new LeaseObjects(objects, prefix, 'cortex', holder, logger.child({ component: 'cortex' }));
      },
      // The index is saved as an object of the bucket, so a restart reads it instead of rebuilding it.
      openSearch: (embedder) => openMemorySearch(store, embedder, logger.child({ component: 'search' }), store.searchIndexFile()),
    };
  },
  openSharedRecords: async (settings) => {
    const { s3Records } = await import('./s3-records.ts');
    return s3Records(settings);
  },
});

// The retrieval evaluation with an embedder of your choice, printed as the tables of README
// "Search quality", on the filesystem or the backend EVAL_BACKEND names (postgres, s3). The CI evaluation (retrieval.test.ts) runs the
// built-in embedder only; this one takes the embedder's settings from the environment:
//
//   EVAL_ENV='{"CAIRN_EMBEDDINGS_URL":"http://127.0.0.1:7801/v1","CAIRN_EMBEDDINGS_MODEL":"use-lite"}' \
//     node --conditions=cairn-source test/eval/with-model.ts
//
// EVAL_ENV is any Cairn settings as JSON (CAIRN_SEARCH_LEXICON=off to compare without the
// lexicon, CAIRN_EMBEDDINGS_MODEL alone for a local ONNX model). test/eval/use-lite-endpoint.ts
// serves a real sentence model through the endpoint for this.
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type BackendName, startBackend } from './backends.ts';
import { buildConversations, buildCorpus } from './corpus/index.ts';
import { evaluate, formatReport } from './evaluate.ts';
import { loadCorpus, waitForVectors } from './load-corpus.ts';

const settings = JSON.parse(process.env.EVAL_ENV ?? '{}') as Record<string, string>;
const backend = (process.env.EVAL_BACKEND ?? 'filesystem') as BackendName;
if (!['filesystem', 'postgres', 's3'].includes(backend)) throw new Error(`EVAL_BACKEND must be filesystem, postgres or s3, not ${backend}`);
const searchWith = (cairn: Cairn) => async (query: string, mode: string, scope: string | undefined): Promise<string[]> => {
  const res = await cairn.call('POST', '/api/v1/search', { query, mode, limit: 10, ...(scope ? { entity_path: scope } : {}) });
  if (res.status !== 200) throw new Error(`search ${JSON.stringify(query)}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.results.map((r: { entry: { entity_path: string; key: string } }) => `${r.entry.entity_path}/${r.entry.key}`);
};

for (const [name, { entries, queries }] of Object.entries({ operations: buildCorpus(), conversations: buildConversations() })) {
  const store = await startBackend(backend);
  try {
    const cairn = await startCairn({ ...store.env, CAIRN_RATE_LIMIT_RPM: '0', ...settings });
    try {
      await loadCorpus(cairn, entries);
      // A remote model's vectors come in the background, and PostgreSQL counts them now and then.
      await waitForVectors(cairn, entries.length);
      console.log(formatReport(`${name}, ${backend} (${cairn.server.runtime.search.embedder.id})`, await evaluate(queries, searchWith(cairn))));
    } finally {
      await cairn.close();
    }
  } finally {
    await store.stop();
  }
}

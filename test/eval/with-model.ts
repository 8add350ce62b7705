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
import { startCairn } from '../helpers/cairn.ts';
import { type BackendName, startBackend } from './backends.ts';
import { buildConversations, buildCorpus, buildKinds } from './corpus/index.ts';
import { evaluate, formatReport } from './evaluate.ts';
import { loadCorpus, searchWith, waitForVectors } from './load-corpus.ts';

const settings = JSON.parse(process.env.EVAL_ENV ?? '{}') as Record<string, string>;
const backend = (process.env.EVAL_BACKEND ?? 'filesystem') as BackendName;
if (!['filesystem', 'postgres', 's3'].includes(backend)) throw new Error(`EVAL_BACKEND must be filesystem, postgres or s3, not ${backend}`);
for (const [name, { entries, queries }] of Object.entries({ operations: buildCorpus(), conversations: buildConversations(), 'other kinds': buildKinds() })) {
  const store = await startBackend(backend);
  try {
    const cairn = await startCairn({ ...store.env, CAIRN_RATE_LIMIT_RPM: '0', ...settings });
    try {
      await loadCorpus(cairn, entries, 100, 900);
      // A model's vectors come in the background: every entry must hold one before the questions.
      await waitForVectors(cairn, entries.length);
      console.log(formatReport(`${name}, ${backend} (${cairn.server.runtime.search.embedder.id})`, await evaluate(queries, searchWith(cairn))));
    } finally {
      await cairn.close();
    }
  } finally {
    await store.stop();
  }
}

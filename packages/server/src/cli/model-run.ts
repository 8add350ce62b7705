import pino from 'pino';
import { parseConfig } from '../config.ts';
import { SettingError } from '../domain/setting-error.ts';
import { openLocalModel } from '../embed/local-model.ts';
import { sayFailure } from './command-exit.ts';

// What `cairn model pull` runs, loaded by its action (model-command.ts) only when it runs: the
// ONNX runtime is no cost to the other commands.

/** `cairn model pull [model]`: fetch the model, load it once, and say what it is. */
export const pullModel = async (model: string | undefined): Promise<void> => {
  let config;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    if (!(error instanceof SettingError)) throw error;
    process.exit(sayFailure(error));
  }
  const spec = model ?? config.embeddingsModel;
  if (!spec) {
    process.stderr.write('cairn model pull: name a model (owner/name or a directory), or set CAIRN_EMBEDDINGS_MODEL\n');
    process.exit(2);
  }
  try {
    const embedder = await openLocalModel(spec, { cacheDir: config.modelCache, hubUrl: config.modelHubUrl, logger: pino({ level: 'silent' }) });
    await embedder.close();
    process.stdout.write(`${embedder.id}: ${embedder.dimension} dimensions, ready (cache: ${config.modelCache})\n`);
  } catch (error) {
    process.stderr.write(`cairn model pull: ${(error as Error).message}\n`);
    process.exit(1);
  }
};

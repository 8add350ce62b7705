import type { Command } from 'commander';
import pino from 'pino';
import { parseConfig } from '../config.ts';
import { SettingError } from '../domain/setting-error.ts';
import { openLocalModel } from '../embed/local-model.ts';
import { sayFailure } from './command-exit.ts';

/**
 * `cairn model pull [model]`: fetch a local model into the cache and check that it loads,
 * without starting a server — for an image build or a machine that will run offline, so
 * `cairn serve` finds it there and never waits on the hub at start.
 */
export const registerModelCommand = (program: Command): void => {
  program
    .command('model')
    .description('local sentence models (CAIRN_EMBEDDINGS_MODEL)')
    .command('pull')
    .argument('[model]', 'model id (owner/name) or directory; default CAIRN_EMBEDDINGS_MODEL')
    .description('fetch a model into CAIRN_MODEL_CACHE (once) and check that it loads')
    .action(async (model: string | undefined) => {
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
    });
};

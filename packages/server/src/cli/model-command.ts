import type { Command } from 'commander';

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
    // The implementation is loaded only when the command runs (model-run.ts says why).
    .action(async (model: string | undefined) => {
      const { pullModel } = await import('./model-run.ts');
      await pullModel(model);
    });
};

import type * as Ort from 'onnxruntime-node';

export type OnnxRuntime = typeof Ort;

/** How to get the runtime, for the start-up error: it is not a dependency of cairn-memory (≈290 MB). */
export const INSTALL_ONNX_RUNTIME =
  'install ONNX Runtime for Node beside cairn-memory: `npm install -g onnxruntime-node` (global install), `npm install onnxruntime-node` (in a project), ' +
  'or run `npx -y -p cairn-memory -p onnxruntime-node cairn serve`; set ONNXRUNTIME_NODE_INSTALL=skip while installing to skip its optional CUDA download';

/**
 * ONNX Runtime for Node, loaded only when a local model is configured: the built-in and
 * remote embedders never need it, and most installs never have it.
 */
export const loadOnnxRuntime = async (): Promise<OnnxRuntime> => {
  try {
    return await import('onnxruntime-node');
  } catch (error) {
    const e = error as { code?: string; message?: string };
    if (e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('onnxruntime-node')) {
      throw new Error(`CAIRN_EMBEDDINGS_MODEL runs the model with ONNX Runtime, which is not installed: ${INSTALL_ONNX_RUNTIME}`);
    }
    throw new Error(`ONNX Runtime for Node is installed but does not load on this machine (${String(e.message)})`);
  }
};

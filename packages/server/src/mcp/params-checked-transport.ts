import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { refuseInvalidParams } from './invalid-params.ts';

/**
 * A transport in front of another (stdio's) that answers requests with params the caller got
 * wrong itself, -32602, as /mcp's dispatcher does: given to the SDK's server, such a request is
 * answered -32603 (internal error) with its schema library's whole report. Everything else
 * passes through untouched, both ways.
 */
export class ParamsCheckedTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private readonly inner: Transport;

  constructor(inner: Transport) {
    this.inner = inner;
  }

  async start(): Promise<void> {
    // Set before the inner transport starts, so no message can arrive unchecked.
    this.inner.onmessage = (message, extra) => {
      const refused = isJSONRPCRequest(message) ? refuseInvalidParams(message) : null;
      if (!refused) {
        this.onmessage?.(message, extra);
        return;
      }
      this.inner.send(refused).catch((error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))));
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    await this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    await this.inner.send(message, options);
  }

  async close(): Promise<void> {
    await this.inner.close();
  }
}

// The ceiling: the same HTTP stack Cairn runs on — fastify 5 with its pino logger configured
// as Cairn configures it, on this Node — answering a fixed small JSON body with no logic.
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import { createLogger } from '../packages/server/src/http/logger.ts';
import { VALUE } from './entry-value.ts';

const logger = createLogger('info');
const app = Fastify({
  loggerInstance: logger as FastifyBaseLogger,
  logController: new LogController({ disableRequestLogging: true }),
});
app.get('/hello', async () => ({ hello: 'world' }));
// A read's floor: the answer Cairn gives to a read of one of the bench's entries (the same
// fields and value, so the same bytes to within a few), sent from a string made once, as
// Cairn sends a version it has answered lately (http/serialize.ts), with its request id.
const entryAnswer = JSON.stringify({
  namespace: 'default', entity_path: 'bench/reads', key: 'r-1234', value: JSON.parse(VALUE), version: 1, confidence: 1,
  agent_id: 'cairn-server', event_type: null, memory_type: 'fact', shared: false, tags: [], provenance: {},
  content_hash: `sha256:${'0'.repeat(64)}`, created_at: new Date().toISOString(), written_at: new Date().toISOString(),
  expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
});
let requests = 0;
app.get('/entry', async (_request, reply) =>
  reply.header('x-request-id', `hello-${++requests}`).type('application/json; charset=utf-8').send(entryAnswer));
app.post('/hello', async () => ({ hello: 'world' }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
logger.info({ url: `http://127.0.0.1:${port}` }, 'hello listening');
process.once('SIGTERM', () => void app.close().then(() => logger.flush(() => process.exit(0))));

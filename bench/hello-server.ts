// The ceiling: the same HTTP stack Cairn runs on — fastify 5 with its pino logger configured
// as Cairn configures it, on this Node — answering a fixed small JSON body with no logic.
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import { createLogger } from '../packages/server/src/http/logger.ts';

const logger = createLogger('info');
const app = Fastify({
  loggerInstance: logger as FastifyBaseLogger,
  logController: new LogController({ disableRequestLogging: true }),
});
app.get('/hello', async () => ({ hello: 'world' }));
app.post('/hello', async () => ({ hello: 'world' }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
logger.info({ url: `http://127.0.0.1:${port}` }, 'hello listening');
process.once('SIGTERM', () => void app.close().then(() => logger.flush(() => process.exit(0))));

// The ceiling: the same HTTP stack (fastify 5, this Node) answering a fixed small JSON body.
import Fastify from 'fastify';

const app = Fastify();
app.get('/hello', async () => ({ hello: 'world' }));
app.post('/hello', async () => ({ hello: 'world' }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
console.log(JSON.stringify({ url: `http://127.0.0.1:${port}`, msg: 'hello listening' }));
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));

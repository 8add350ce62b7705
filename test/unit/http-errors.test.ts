import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { registerErrorHandlers } from '../../packages/server/src/http/errors.ts';

/**
 * The error handler tells the client's mistakes (4xx) from ours (500): a SyntaxError raised
 * while parsing the request body is a bad request, one raised while reading stored data is not.
 */
describe('error handler', () => {
  const app = Fastify();
  registerErrorHandlers(app);
  app.post('/echo', async (request) => ({ got: request.body }));
  app.get('/corrupt', async () => JSON.parse('{"half": ') as unknown);
  app.post('/parser-syntax', async () => {
    throw Object.assign(new SyntaxError('Unexpected end of JSON input'), { statusCode: 400 });
  });
  afterAll(() => app.close());

  it('answers 400 with a plain message for a body that is not JSON', async () => {
    const res = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"a": ' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: 'BAD_REQUEST' } });
  });

  it('answers 400 "not valid JSON" for a parser SyntaxError marked 400', async () => {
    const res = await app.inject({ method: 'POST', url: '/parser-syntax', headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe('the body is not valid JSON');
  });

  it('answers 500 without internals when stored data fails to parse', async () => {
    const res = await app.inject({ method: 'GET', url: '/corrupt' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ error: { code: 'INTERNAL' } });
    expect(res.body).not.toContain('JSON');
  });
});

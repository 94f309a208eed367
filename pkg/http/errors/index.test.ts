import { Writable } from 'node:stream';
import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../../log/index.ts';
import { bodyLimit } from '../body-limit/index.ts';
import { route } from '../openapi/index.ts';
import { requestId } from '../request-id/index.ts';
import { errorHandler, httpError, notFoundHandler, validationHook } from './index.ts';

/** Log records as objects, to see what the handler logged and at which level. */
let records: Array<{ level: string; msg: string; code?: string; err?: { message?: string } }> = [];
const logger = createLogger({
  level: 'debug',
  destination: new Writable({
    write(chunk, _enc, done) {
      records.push(JSON.parse(String(chunk)));
      done();
    },
  }),
});
afterEach(() => {
  records = [];
});

class StoreDown extends Error {}
const storeDown = (err: Error) =>
  err instanceof StoreDown ? httpError('storage_unavailable', err.message) : undefined;

/** Wired as the broker and the API service are: request id, body limit, validation hook, onError. */
function app(opts: Parameters<typeof errorHandler>[1] = {}) {
  const a = new OpenAPIHono({ defaultHook: validationHook });
  a.use('*', requestId());
  a.use('*', bodyLimit(64));
  a.onError(errorHandler(logger, opts));
  a.notFound(notFoundHandler);
  a.get('/taken', () => {
    throw httpError('conflict', 'the name is taken', { name: 'x' });
  });
  a.get('/store', () => {
    throw new StoreDown('the store is down');
  });
  a.get('/bug', () => {
    throw new TypeError('x is undefined');
  });
  // What a body read throws on Node when the client closed the connection mid-upload.
  a.get('/gone', () => {
    throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
  });
  a.post('/parse', async (c) => c.json(JSON.parse(await c.req.text())));
  route(
    a,
    createRoute({
      method: 'post',
      path: '/things',
      request: {
        body: {
          required: true,
          content: {
            'application/json': {
              schema: z.object({
                name: z.string(),
                input: z.union([z.string(), z.array(z.object({ role: z.string() }))]),
              }),
            },
          },
        },
      },
      responses: { 201: { description: 'Created' } },
    }),
    (c) => c.json(c.req.valid('json'), 201),
  );
  return a;
}

const post = (path: string, body: string) =>
  app().request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('errorHandler', () => {
  it('renders a thrown HttpError as the envelope, with the request id, and does not log a 4xx', async () => {
    const res = await app().request('/taken', { headers: { 'x-request-id': 'r-1' } });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error: { code: 'conflict', message: 'the name is taken', requestId: 'r-1', details: { name: 'x' } },
    });
    expect(records).toEqual([]);
  });

  it('asks the mappers for errors it does not know, and warns about a mapped 5xx', async () => {
    const res = await app({ mappers: [() => undefined, storeDown] }).request('/store');
    expect(res.status).toBe(503);
    expect((await res.json()).error).toMatchObject({
      code: 'storage_unavailable',
      message: 'the store is down',
    });
    expect(records).toMatchObject([
      { level: 'warn', code: 'storage_unavailable', reason: 'the store is down', msg: 'request failed' },
    ]);
  });

  it('answers an unknown error 500 `internal`, keeping the details in the log only', async () => {
    const unmapped = await app().request('/store');
    expect(unmapped.status).toBe(500);
    const res = await app({ mappers: [storeDown] }).request('/bug');
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body.error.code).toBe('internal');
    expect(JSON.stringify(body)).not.toContain('x is undefined');
    expect(records.at(-1)).toMatchObject({ level: 'error', err: { message: 'x is undefined' } });
  });

  it('a body read cut short by the client is a 400, not a logged 500 (a client could fill the log)', async () => {
    const res = await app().request('/gone');
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'invalid_request' });
    expect(records.filter((r) => r.level === 'error' || r.level === 'warn')).toEqual([]);
  });

  it('renders through a sub-app renderer when given one', async () => {
    const res = await app({ render: (c, e) => c.json({ oops: e.code }, e.status) }).request('/taken');
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ oops: 'conflict' });
  });
});

describe('the same fault, the same answer', () => {
  it('malformed JSON is 400 `invalid_json`, from the validator and from a hand-parsed body', async () => {
    for (const path of ['/things', '/parse']) {
      const res = await post(path, '{"name": ');
      expect(res.status, path).toBe(400);
      expect((await res.json()).error.code, path).toBe('invalid_json');
    }
  });

  it('a validation failure is 400 `invalid_request` listing every issue, unions flattened', async () => {
    const res = await post('/things', JSON.stringify({ input: [{ role: 1 }] }));
    expect(res.status).toBe(400);
    const { error } = await res.json();
    expect(error.code).toBe('invalid_request');
    // The array alternative had the input's shape: its own issue, not a bare "Invalid input".
    expect(error.details.issues.map((i: { path: string }) => i.path)).toEqual(['name', 'input.0.role']);
  });

  it('a body over the limit is 413 `payload_too_large`', async () => {
    const res = await post('/things', JSON.stringify({ name: 'x'.repeat(100), input: 'y' }));
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('payload_too_large');
  });

  it('an unknown route is 404 `not_found`', async () => {
    const res = await app().request('/nowhere');
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatchObject({
      code: 'not_found',
      message: 'no route for GET /nowhere',
    });
  });
});

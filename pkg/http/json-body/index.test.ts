import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { bodyLimit } from '../body-limit/index.ts';
import { errorHandler, HttpError } from '../errors/index.ts';
import { exceedsJsonDepth, jsonDepthLimit, MAX_JSON_DEPTH, parseJson } from './index.ts';

const arrays = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const objects = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

describe('exceedsJsonDepth', () => {
  it('counts arrays and objects alike, up to and past the limit', () => {
    expect(exceedsJsonDepth(arrays(MAX_JSON_DEPTH))).toBe(false);
    expect(exceedsJsonDepth(arrays(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(exceedsJsonDepth(objects(MAX_JSON_DEPTH))).toBe(false);
    expect(exceedsJsonDepth(objects(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(exceedsJsonDepth(`[${'[1],'.repeat(5000)}[1]]`)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const inString = JSON.stringify({ s: '['.repeat(500), t: '\\"[[[[', u: `"${'{'.repeat(300)}` });
    expect(exceedsJsonDepth(inString)).toBe(false);
    expect(exceedsJsonDepth(`{"a\\\\":${arrays(200)}}`)).toBe(true);
  });
});

describe('parseJson', () => {
  it('parses within the limit and refuses past it with 400 json_too_deep', () => {
    expect(parseJson('{"a":[1]}')).toEqual({ a: [1] });
    const err = (() => {
      try {
        parseJson(arrays(20_000));
      } catch (e) {
        return e as HttpError;
      }
    })();
    expect(err).toBeInstanceOf(HttpError);
    expect(err?.status).toBe(400);
    expect(err?.code).toBe('json_too_deep');
    expect(() => parseJson('{nope')).toThrow(SyntaxError);
  });
});

function app() {
  const a = new Hono();
  a.use('*', bodyLimit(1 << 20));
  a.use('*', jsonDepthLimit());
  a.onError(errorHandler(createLogger({ level: 'silent' })));
  a.post('/echo', async (c) => c.json(await c.req.json()));
  a.post('/ignore', (c) => c.json({ ok: true }));
  a.post('/text', async (c) => c.text(await c.req.text()));
  // A sub-app with its own error shape, like /compat/v1.
  const sub = new Hono();
  sub.onError(
    errorHandler(createLogger({ level: 'silent' }), {
      render: (c, e) =>
        c.json({ error: { message: e.message, type: 'invalid_request_error', code: e.code } }, e.status),
    }),
  );
  sub.post('/echo', async (c) => c.json(await c.req.json()));
  a.route('/sub', sub);
  return a;
}

const post = (path: string, body: string, type = 'application/json') =>
  app().request(path, { method: 'POST', headers: { 'content-type': type }, body });

describe('jsonDepthLimit', () => {
  it('lets JSON within the limit through, readable again by the route', async () => {
    const res = await post('/echo', objects(MAX_JSON_DEPTH - 1));
    expect(res.status).toBe(200);
  });

  it('answers a body nested too deep with 400 json_too_deep, whoever reads it', async () => {
    for (const body of [arrays(20_000), objects(5_000)]) {
      const res = await post('/echo', body);
      expect(res.status).toBe(400);
      const { error } = await res.json();
      expect(error.code).toBe('json_too_deep');
      expect(error.message).toContain(`${MAX_JSON_DEPTH} levels`);
    }
  });

  it('is answered in a sub-app’s own error shape', async () => {
    const res = await post('/sub/echo', arrays(1_000));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        message: expect.stringContaining('nested'),
        type: 'invalid_request_error',
        code: 'json_too_deep',
      },
    });
  });

  it('leaves a route that never reads its body alone (and no rejection unhandled)', async () => {
    expect((await post('/ignore', arrays(1_000))).status).toBe(200);
  });

  it('does not read bodies that are not JSON (NDJSON is streamed by its route)', async () => {
    const ndjson = `${arrays(1_000)}\n`;
    const res = await post('/text', ndjson, 'application/x-ndjson');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(ndjson);
  });
});

describe('jsonDepthLimit checkedByRoute', () => {
  it('leaves the bodies of the routes that check depth themselves to them', async () => {
    const a = new Hono();
    a.use('*', jsonDepthLimit(MAX_JSON_DEPTH, { checkedByRoute: (path) => path === '/own' }));
    a.onError(errorHandler(createLogger({ level: 'silent' })));
    a.post('/own', async (c) => c.json({ length: (await c.req.text()).length }));
    a.post('/other', async (c) => c.json({ length: (await c.req.text()).length }));
    const deep = arrays(5_000);
    const own = await a.request('/own', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: deep,
    });
    expect(await own.json()).toEqual({ length: 10_000 });
    const other = await a.request('/other', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: deep,
    });
    expect(other.status).toBe(400);
  });
});

import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { httpError, renderEnvelope } from '../errors/index.ts';
import { mediaTypeOf, requireMediaType } from './index.ts';

function appWith(optional: boolean) {
  const app = new Hono();
  app.post(
    '/',
    requireMediaType(
      ['application/json'],
      (c, m) => renderEnvelope(c, httpError('unsupported_media_type', m)),
      optional,
    ),
    (c) => c.text(`ok ${mediaTypeOf(c) || 'none'}`),
  );
  return app;
}

// Bytes, not a string: a string body would get `text/plain` from the Request constructor.
const post = (app: Hono, body: string | undefined, type?: string) =>
  app.request('/', {
    method: 'POST',
    body: body === undefined ? undefined : new TextEncoder().encode(body),
    headers: type ? { 'content-type': type } : {},
  });

describe('requireMediaType', () => {
  it('accepts the type with parameters and in any case', async () => {
    const res = await post(appWith(false), '{}', 'Application/JSON; charset=utf-8');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok application/json');
  });

  it('refuses another type with a message naming it and what to send', async () => {
    const res = await post(appWith(false), '<x/>', 'application/xml');
    expect(res.status).toBe(415);
    expect((await res.json()).error.message).toBe(
      'unsupported media type "application/xml"; send application/json',
    );
  });

  it('refuses a body without a content type when the body is required', async () => {
    const res = await post(appWith(false), '{}');
    expect(res.status).toBe(415);
    expect((await res.json()).error.message).toContain('"none"');
  });

  it('when optional, lets through no body, an empty body and an unlabelled body, but not a wrong type', async () => {
    const app = appWith(true);
    expect((await post(app, undefined)).status).toBe(200);
    expect((await app.request('/', { method: 'POST', headers: { 'content-length': '0' } })).status).toBe(200);
    expect((await post(app, '{}')).status).toBe(200);
    expect((await post(app, 'a=b', 'application/x-www-form-urlencoded')).status).toBe(415);
  });

  it('when optional, ignores a stray content type on a request without a body', async () => {
    const app = appWith(true);
    expect((await post(app, undefined, 'text/plain')).status).toBe(200);
    const empty = { 'content-type': 'text/plain', 'content-length': '0' };
    expect((await app.request('/', { method: 'POST', headers: empty })).status).toBe(200);
    // The same bodiless request is refused when the body is required.
    expect((await post(appWith(false), undefined, 'text/plain')).status).toBe(415);
  });

  it('when optional, trusts content-length: 0 behind the Node adapter (which gives every POST a stream)', async () => {
    const server = serve({ fetch: appWith(true).fetch, port: 0, hostname: '127.0.0.1' });
    try {
      await new Promise<void>((r) => server.once('listening', () => r()));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const empty = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' } });
      expect(empty.status).toBe(200);
      const full = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
      expect(full.status).toBe(415);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('mediaTypeOf', () => {
  it('drops parameters, trims and lower-cases; empty when absent', async () => {
    const app = new Hono();
    app.post('/', (c) => c.text(`[${mediaTypeOf(c)}]`));
    expect(await (await post(app, 'x', ' Text/Plain ;charset=utf-8')).text()).toBe('[text/plain]');
    expect(await (await post(app, 'x')).text()).toBe('[]');
  });
});

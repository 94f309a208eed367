import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { sendError } from '../errors/index.ts';
import { mediaTypeOf, requireMediaType } from './index.ts';

function appWith(optional: boolean) {
  const app = new Hono();
  app.post(
    '/',
    requireMediaType(
      ['application/json'],
      (c, m) => sendError(c, 415, 'unsupported_media_type', m),
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
});

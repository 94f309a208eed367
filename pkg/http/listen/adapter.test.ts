import { getRequestListener, type HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ALREADY_SENT_HEADER, alreadySent, realResponseClass } from './adapter.ts';
import { listenHttp } from './index.ts';

describe('the already-sent marker', () => {
  it('carries the header of the adapter’s own marker', () => {
    expect([...RESPONSE_ALREADY_SENT.headers.keys()]).toEqual([ALREADY_SENT_HEADER]);
  });

  it('lets a route answer on the socket itself, whichever server of the process serves it', async () => {
    const app = new Hono<{ Bindings: HttpBindings }>().get('/own', (c) => {
      c.env.outgoing.writeHead(207, { 'content-type': 'text/plain' });
      c.env.outgoing.end('written by the route');
      return alreadySent();
    });
    // As another server of the process would: the adapter replaces the global Response first.
    getRequestListener(() => new Response('other'));
    expect(globalThis.Response).not.toBe(realResponseClass());
    for (const _ of [1, 2]) {
      const l = await listenHttp(app.fetch, { port: 0 });
      try {
        const res = await fetch(`${l.url}/own`);
        expect(res.status).toBe(207);
        expect(await res.text()).toBe('written by the route');
      } finally {
        await l.close();
      }
    }
    expect(alreadySent().constructor).toBe(realResponseClass());
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBroker } from '../../pkg/broker/server.ts';
import { collect, post, startTestBroker } from '../broker/harness.ts';
import { createNamespace } from '../support/kube.ts';
import { client, startService, type TestService } from './support.ts';

let broker: RunningBroker;
let svc: TestService;
let ns: string;

beforeAll(async () => {
  ns = await createNamespace('gw-broker');
  broker = await startTestBroker();
  svc = await startService({ namespace: ns, brokerUrl: broker.url });
  const messages = Array.from({ length: 5 }, (_, i) => ({ role: 'user', content: `m${i}` }));
  const res = await post(`${broker.url}/messages`, { conversation_id: 'c1', query_id: 'q1', messages });
  expect(res.status).toBeLessThan(300);
});
afterAll(async () => {
  await svc?.close();
  await broker?.close();
});

describe('/v1/broker/* read proxy', () => {
  it('pages messages with limit and cursor exactly as the broker does', async () => {
    const api = client(svc.url);
    const first = await api.get('/v1/broker/messages?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 5, hasMore: true });
    expect(first.body.items.map((m: any) => m.content ?? m.message?.content)).toEqual(['m0', 'm1']);
    const next = await api.get(`/v1/broker/messages?limit=2&cursor=${first.body.nextCursor}`);
    expect(next.body.items.map((m: any) => m.content ?? m.message?.content)).toEqual(['m2', 'm3']);
    const direct = await (
      await fetch(`${broker.url}/messages?limit=2&cursor=${first.body.nextCursor}`)
    ).json();
    expect(next.body).toEqual(direct);
    expect(first.headers.get('content-type')).toContain('application/json');
  });

  it('answers every readable domain and passes broker errors through', async () => {
    const api = client(svc.url);
    for (const p of ['conversations', 'memory-status', 'traces', 'events', 'sessions', 'stream'])
      expect((await api.get(`/v1/broker/${p}`)).status, p).toBe(200);
    expect((await api.get('/v1/broker/memory-status')).body).toMatchObject({ total_messages: 5 });
    const bad = await api.get('/v1/broker/messages?limit=abc');
    expect(bad.status).toBe(400);
    expect((await fetch(`${broker.url}/messages?limit=abc`)).status).toBe(400);
  });

  it('is read-only and limited to the broker domains', async () => {
    const api = client(svc.url);
    for (const method of ['POST', 'DELETE', 'PUT', 'PATCH']) {
      const res = await api.call(method, '/v1/broker/messages', method === 'DELETE' ? undefined : {});
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('GET');
    }
    expect((await api.get('/v1/broker/memory-status')).body.total_messages).toBe(5);
    const other = await api.get('/v1/broker/readyz');
    expect(other.status).toBe(404);
    expect(other.body.error.message).toContain('readable');
  });

  it('passes an SSE watch through unbuffered (EventSource client)', async () => {
    const w = collect(`${svc.url}/v1/broker/messages?watch=true&conversation_id=live`);
    try {
      // The watch is live before anything is written: the broker's `: connected` comment went through.
      await new Promise<void>((resolve, reject) => {
        w.es.onopen = () => resolve();
        w.es.onerror = () => reject(new Error('SSE connection failed'));
      });
      await post(`${broker.url}/messages`, {
        conversation_id: 'live',
        query_id: 'q2',
        messages: [{ role: 'user', content: 'first live' }],
      });
      await w.until(1);
      expect(JSON.parse(w.data[0] ?? '{}')).toMatchObject({ conversation_id: 'live' });
      expect(w.data[0]).toContain('first live');
      await post(`${broker.url}/messages`, {
        conversation_id: 'live',
        query_id: 'q2',
        messages: [{ role: 'assistant', content: 'second live' }],
      });
      await w.until(2);
      expect(w.data[1]).toContain('second live');
      expect(w.ids.every((id) => /^\d+$/.test(id))).toBe(true);
    } finally {
      w.close();
    }
  });

  it('sends the SSE headers and first bytes before the stream ends (raw fetch)', async () => {
    const res = await fetch(`${svc.url}/v1/broker/events?watch=true`);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    const reader = res.body?.getReader();
    const { value } = (await reader?.read()) ?? {};
    expect(new TextDecoder().decode(value)).toContain(':');
    await reader?.cancel();
  });

  it('answers 503 with a clear message without a broker or when it is down', async () => {
    const none = await startService({ namespace: ns });
    const down = await startTestBroker();
    const downUrl = down.url;
    await down.close();
    const gone = await startService({ namespace: ns, brokerUrl: downUrl });
    try {
      const a = await client(none.url).get('/v1/broker/messages');
      expect(a.status).toBe(503);
      expect(a.body.error).toMatchObject({ code: 'broker_not_configured' });
      expect(a.body.error.message).toContain('BROKER_URL');
      const b = await client(gone.url).get('/v1/broker/messages');
      expect(b.status).toBe(503);
      expect(b.body.error.code).toBe('broker_unavailable');
      expect(b.body.error.message).toContain(new URL(downUrl).origin);
      expect((await client(gone.url).get('/v1/context')).body.broker).toBe(true);
    } finally {
      await none.close();
      await gone.close();
    }
  });
});

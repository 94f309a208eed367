import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBroker } from '../../pkg/broker/server.ts';
import { json, post, startTestBroker } from './harness.ts';

let b: RunningBroker;
beforeAll(async () => {
  b = await startTestBroker();
});
afterAll(() => b.close());

describe('memory contract', () => {
  it('creates a conversation, stores messages, lists them with {messages,total,limit,offset}', async () => {
    const created = await post(`${b.url}/conversations`, '');
    expect(created.status).toBe(201);
    const { conversation_id } = await json<{ conversation_id: string }>(created);
    expect(conversation_id).toMatch(/\w/);

    const stored = await post(`${b.url}/messages`, {
      conversation_id,
      query_id: 'q-1',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello', name: 'bot' },
      ],
    });
    expect(stored.status).toBe(201);

    const page = await json(fetch(`${b.url}/messages?conversation_id=${conversation_id}&limit=1&offset=1`));
    expect(page).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect(page.items).toBeUndefined();
    expect(page.messages).toEqual([
      {
        timestamp: expect.any(String),
        conversation_id,
        query_id: 'q-1',
        message: { role: 'assistant', content: 'hello', name: 'bot' },
      },
    ]);

    expect((await json(fetch(`${b.url}/conversations`))).conversations).toContain(conversation_id);
    const detail = await json(fetch(`${b.url}/conversations/${conversation_id}`));
    expect(detail.conversation_id).toBe(conversation_id);
    expect(detail.messages.map((m: any) => m.sequence)).toEqual([expect.any(Number), expect.any(Number)]);
    expect((await fetch(`${b.url}/health`)).status).toBe(200);
  });

  it("deletes a conversation (404 afterwards) and a query's messages", async () => {
    await post(`${b.url}/messages`, {
      conversation_id: 'del-c',
      query_id: 'del-q',
      messages: [{ role: 'user', content: 'x' }],
    });
    await post(`${b.url}/messages`, {
      conversation_id: 'keep-c',
      query_id: 'del-q',
      messages: [{ role: 'user', content: 'y' }],
    });
    const byQuery = await json(fetch(`${b.url}/queries/del-q/messages`, { method: 'DELETE' }));
    expect(byQuery.deleted).toBe(2);
    expect((await fetch(`${b.url}/conversations/del-c`, { method: 'DELETE' })).status).toBe(200);
    expect((await fetch(`${b.url}/conversations/del-c`)).status).toBe(404);
    expect((await fetch(`${b.url}/conversations/del-c`, { method: 'DELETE' })).status).toBe(404);
    const status = await json(fetch(`${b.url}/memory-status`));
    expect(status.conversations['keep-c']).toEqual({ message_count: 0, query_count: 0 });
  });
});

describe('purges with an Idempotency-Key (the Query finalizer sends one)', () => {
  it('runs a purge once: a repeat with the key is answered with the first answer, not run again', async () => {
    const write = (content: string) =>
      post(`${b.url}/messages`, {
        conversation_id: 'idem-c',
        query_id: 'idem-q',
        messages: [{ role: 'user', content }],
      });
    await write('one');
    await write('two');
    const purge = () =>
      fetch(`${b.url}/queries/idem-q/messages`, {
        method: 'DELETE',
        headers: { 'idempotency-key': 'purge-uid-123-messages' },
      });
    const first = await purge();
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect((await first.json()).deleted).toBe(2);
    await write('three'); // written after the purge: a repeat must not delete it
    const again = await purge();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await again.json()).deleted).toBe(2);
    const left = await json(fetch(`${b.url}/messages?query_id=idem-q&offset=0`));
    expect(left.total).toBe(1);
    // The same key on the events purge is another request; a malformed key is refused.
    const events = await fetch(`${b.url}/events/idem-q`, {
      method: 'DELETE',
      headers: { 'idempotency-key': 'purge-uid-123-messages' },
    });
    expect(events.headers.get('idempotent-replayed')).toBeNull();
    const bad = await fetch(`${b.url}/events/idem-q`, {
      method: 'DELETE',
      headers: { 'idempotency-key': 'a b' },
    });
    expect(bad.status).toBe(400);
  });
});

describe('memory writes with an Idempotency-Key (the engine sends one per write)', () => {
  it('stores a write resent with its key once, and answers the resend as the first', async () => {
    const send = (key: string, content: string) =>
      fetch(`${b.url}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({
          conversation_id: 'idem-w',
          query_id: 'idem-wq',
          messages: [{ role: 'user', content }],
        }),
      });
    const first = await send('berth-write-1', 'once');
    expect(first.status).toBe(201);
    const again = await send('berth-write-1', 'once');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await send('berth-write-2', 'twice')).headers.get('idempotent-replayed')).toBeNull();
    const stored = await json(fetch(`${b.url}/messages?conversation_id=idem-w`));
    expect(stored.total).toBe(2);
    const conv = () =>
      fetch(`${b.url}/conversations`, { method: 'POST', headers: { 'idempotency-key': 'berth-write-c' } });
    const c1 = await (await conv()).json();
    const c2 = await (await conv()).json();
    expect(c2.conversation_id).toBe(c1.conversation_id);
  });
});

describe('broker message paging', () => {
  it('pages by exclusive cursor with nextCursor, and sequences survive a purge', async () => {
    const conv = 'paging';
    for (let i = 0; i < 5; i++)
      await post(`${b.url}/messages`, {
        conversation_id: conv,
        query_id: 'p',
        messages: [{ role: 'user', content: `m${i}` }],
      });
    const first = await json(fetch(`${b.url}/messages?conversation_id=${conv}&limit=2&cursor=0`));
    expect(Object.keys(first).sort()).toEqual(['hasMore', 'items', 'nextCursor', 'total']);
    expect(first.items.map((m: any) => m.message.content)).toEqual(['m0', 'm1']);
    expect(first).toMatchObject({ total: 5, hasMore: true, nextCursor: first.items[1].sequence });
    const second = await json(
      fetch(`${b.url}/messages?conversation_id=${conv}&limit=10&cursor=${first.nextCursor}`),
    );
    expect(second.items.map((m: any) => m.message.content)).toEqual(['m2', 'm3', 'm4']);
    expect(second.hasMore).toBe(false);

    const before = second.items[2].sequence as number;
    expect((await json(fetch(`${b.url}/messages`, { method: 'DELETE' }))).deleted).toBeGreaterThan(0);
    await post(`${b.url}/messages`, {
      conversation_id: conv,
      query_id: 'p',
      messages: [{ role: 'user', content: 'after' }],
    });
    const after = await json(fetch(`${b.url}/messages?cursor=0`));
    expect(after.items[0].sequence).toBeGreaterThan(before);
  });

  it('answers the first page with both envelopes when neither cursor nor offset is given', async () => {
    const both = await json(fetch(`${b.url}/messages?limit=1`));
    expect(both.items).toHaveLength(1);
    expect(both.messages).toHaveLength(1);
    expect(both.messages[0].sequence).toBeUndefined();
  });
});

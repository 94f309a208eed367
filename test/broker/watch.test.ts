import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBroker } from '../../pkg/broker/server.ts';
import { collect, eventually, json, post, readSse, startTestBroker } from './harness.ts';

let b: RunningBroker;
beforeAll(async () => {
  b = await startTestBroker();
});
afterAll(() => b.close());

const msg = (conv: string, q: string, content: string) =>
  post(`${b.url}/messages`, { conversation_id: conv, query_id: q, messages: [{ role: 'user', content }] });
const event = (queryId: string, reason: string, sessionId = 's-watch') =>
  post(`${b.url}/events`, { eventType: 'Normal', reason, message: reason, data: { queryId, sessionId } });

describe('watch=true on every list endpoint (EventSource client)', () => {
  it('replays then goes live with no gap and no duplicate while 4 writers post concurrently', async () => {
    for (let i = 0; i < 50; i++) await msg('live', 'w0', `pre-${i}`);
    const w = collect(`${b.url}/messages?watch=true&from-beginning=true&conversation_id=live`);
    const writers = [1, 2, 3, 4].map(async (n) => {
      for (let i = 0; i < 50; i++) await msg('live', `w${n}`, `w${n}-${i}`);
    });
    await Promise.all(writers);
    await w.until(250);
    const seqs = w.data.map((d) => JSON.parse(d).sequence as number);
    expect(new Set(seqs).size).toBe(250);
    expect([...seqs].sort((a, b2) => a - b2)).toEqual(seqs);
    expect(w.ids).toEqual(seqs.map(String));
    const stored = await json(fetch(`${b.url}/messages?conversation_id=live&cursor=0&limit=1000`));
    expect(stored.items.map((m: any) => m.sequence)).toEqual(seqs);
    w.close();
  });

  it('resumes after Last-Event-ID without repeating what was seen', async () => {
    const page = await json(fetch(`${b.url}/messages?conversation_id=live&cursor=0&limit=1000`));
    const mid = page.items[199].sequence as number;
    const w = collect(`${b.url}/messages?watch=true&conversation_id=live`, { 'last-event-id': String(mid) });
    await w.until(50);
    expect(Number(w.ids[0])).toBe(page.items[200].sequence);
    w.close();
  });

  it('streams events (session_id filter), sessions (filters apply), chunks and conversations', async () => {
    const ev = collect(`${b.url}/events?watch=true&session_id=s-watch`);
    const sessions = collect(`${b.url}/sessions?watch=true&status=active`);
    const chunks = collect(`${b.url}/stream?watch=true`);
    const convs = collect(`${b.url}/conversations?watch=true`);
    await eventually(() => b.deps.hub.stats().subscribers >= 4);
    await event('qa', 'QueryExecutionStart');
    await event('qb', 'QueryExecutionStart', 'other-session');
    await post(`${b.url}/stream/qa`, [{ choices: [{ delta: { content: 'x' } }] }]);
    await msg('new-conv', 'qa', 'hello');
    await Promise.all([ev.until(1), sessions.until(1), chunks.until(1), convs.until(1)]);
    expect(JSON.parse(ev.data[0] as string).data.queryId).toBe('qa');
    expect(ev.data.every((d) => JSON.parse(d).data.sessionId === 's-watch')).toBe(true);
    expect(sessions.data.every((d) => JSON.parse(d).status === 'active')).toBe(true);
    expect(JSON.parse(chunks.data[0] as string)).toMatchObject({
      query: 'qa',
      chunk: { choices: [{ delta: { content: 'x' } }] },
    });
    expect(JSON.parse(convs.data[0] as string).conversation_id).toBe('new-conv');
    for (const w of [ev, sessions, chunks, convs]) w.close();
    await eventually(() => b.deps.hub.stats().subscribers === 0);
  });

  it('starts with ": connected" and sends heartbeats', async () => {
    const res = await fetch(`${b.url}/events?watch=true`);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const text = await readSse(res, (t) => t.includes(': heartbeat'));
    expect(text.startsWith(': connected\n\n')).toBe(true);
  });
});

describe('per-query chunk stream', () => {
  it('parses NDJSON as it arrives: a reader sees the first chunk before the upload ends', async () => {
    const reader = collect(`${b.url}/stream/nd?wait-for-query=10&from-beginning=true`);
    let push!: (s: string) => void;
    let end!: () => void;
    const body = new ReadableStream<Uint8Array>({
      start(ctrl) {
        push = (s) => ctrl.enqueue(new TextEncoder().encode(s));
        end = () => ctrl.close();
      },
    });
    const upload = fetch(`${b.url}/stream/nd`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body,
      duplex: 'half',
    } as RequestInit);
    push('{"choices":[{"delta":{"content":"one"}}]}\n');
    await reader.until(1);
    expect(JSON.parse(reader.data[0] as string).choices[0].delta.content).toBe('one');
    push('{"choices":[{"delta":{"content":"two"}}]}');
    end();
    expect(await json(upload)).toEqual({ status: 'stream_processed', query: 'nd', chunks_received: 2 });
    expect(await json(post(`${b.url}/stream/nd/complete`, ''))).toEqual({ status: 'completed', query: 'nd' });
    await reader.until(3);
    reader.close();
    expect(reader.data.slice(1, 3)).toEqual(['{"choices":[{"delta":{"content":"two"}}]}', '[DONE]']);
  });

  it('forwards an error chunk then [DONE], and ends a silent stream with an idle-timeout frame', async () => {
    await post(`${b.url}/stream/err`, { error: { message: 'boom', type: 'server_error', code: 'x' } });
    const text = await readSse(await fetch(`${b.url}/stream/err?from-beginning=true`), (t) =>
      t.includes('[DONE]'),
    );
    expect(text).toMatch(/"boom"[\s\S]*data: \[DONE\]/);

    const quick = await startTestBroker({
      sse: { heartbeatMs: 1000, maxBufferedBytes: 1 << 20, streamIdleMs: 300, flushMs: 20 },
    });
    try {
      await post(`${quick.url}/stream/idle`, [{ choices: [] }]);
      const idle = await readSse(await fetch(`${quick.url}/stream/idle?from-beginning=true`), (t) =>
        t.includes('[DONE]'),
      );
      expect(idle).toContain('"code":"idle_timeout"');
    } finally {
      await quick.close();
    }
  });

  it('ends every open query stream at once when the chunks are purged, and keeps the firehose watch', async () => {
    const own = await startTestBroker();
    try {
      await post(`${own.url}/stream/live-a`, [{ n: 1 }]);
      await post(`${own.url}/stream/live-b`, [{ n: 1 }]);
      const firehose = collect(`${own.url}/stream?watch=true`);
      const streams = await Promise.all(
        ['live-a', 'live-b'].map((q) => openStream(`${own.url}/stream/${q}?from-beginning=true`)),
      );
      for (const st of streams) await st.readUntil(/"n":1/); // open, and past their first chunk
      await eventually(() => firehose.es.readyState === 1);
      const purged = await json(fetch(`${own.url}/stream`, { method: 'DELETE' }));
      expect(purged.deleted).toBeGreaterThanOrEqual(2);
      const started = Date.now();
      for (const st of streams)
        expect(await st.readUntil(/data: \[DONE\]/)).toMatch(/"code":"purged"[\s\S]*data: \[DONE\]/);
      expect(Date.now() - started).toBeLessThan(5_000); // not the idle timeout
      // The firehose watch is not a query's stream: it stays open and sees what comes next.
      await post(`${own.url}/stream/after`, [{ n: 2 }]);
      await firehose.until(1);
      expect(JSON.parse(firehose.data.at(-1) as string).query).toBe('after');
      firehose.close();
    } finally {
      await own.close();
    }
  });

  it('404s an unknown query without wait-for-query; a rerun after completion streams only the new run', async () => {
    expect((await fetch(`${b.url}/stream/never`)).status).toBe(404);
    await post(`${b.url}/stream/rerun`, [{ n: 1 }]);
    await post(`${b.url}/stream/rerun/complete`, '');
    await post(`${b.url}/stream/rerun`, [{ n: 2 }]);
    await post(`${b.url}/stream/rerun/complete`, '');
    const text = await readSse(await fetch(`${b.url}/stream/rerun?from-beginning=true`), (t) =>
      t.includes('[DONE]'),
    );
    expect(text).toContain('{"n":2}');
    expect(text).not.toContain('{"n":1}');
  });
});

describe('sessions', () => {
  it('rolls up status from events and messages, filters always apply, query deletion keeps sessions', async () => {
    await event('s1-q1', 'QueryExecutionStart', 'sess-1');
    await event('s1-q1', 'QueryExecutionComplete', 'sess-1');
    await event('s2-q1', 'QueryExecutionStart', 'sess-2');
    await event('s3-q1', 'QueryExecutionStart', 'sess-3');
    await post(`${b.url}/events`, {
      eventType: 'Warning',
      reason: 'QueryExecutionError',
      message: 'x',
      data: { queryId: 's3-q1', sessionId: 'sess-3' },
    });
    await msg('conv-s1', 's1-q1', 'hi');
    const get = (id: string) => json(fetch(`${b.url}/sessions/${id}`));
    expect((await get('sess-1')).status).toBe('idle');
    expect((await get('sess-1')).conversations).toEqual(['conv-s1']);
    expect((await get('sess-2')).status).toBe('active');
    expect((await get('sess-3')).status).toBe('error');
    const errs = await json(fetch(`${b.url}/sessions?status=error&search=SESS-3`));
    expect(errs.items.map((s: any) => s.sessionId)).toEqual(['sess-3']);
    expect(errs.statusCounts).toEqual({ active: 0, idle: 0, error: 1 });
    const all = await json(fetch(`${b.url}/sessions?sort=name&order=desc&limit=2`));
    expect(all.items).toHaveLength(2);
    expect(all.statusCounts.active).toBeGreaterThan(0);
    expect((await fetch(`${b.url}/events/s1-q1`, { method: 'DELETE' })).status).toBe(200);
    expect((await fetch(`${b.url}/queries/s1-q1/messages`, { method: 'DELETE' })).status).toBe(200);
    expect((await get('sess-1')).sessionId).toBe('sess-1');
    expect((await json(fetch(`${b.url}/events/s1-q1`))).total).toBe(0);
    expect((await post(`${b.url}/sessions`, { sessionId: 'made', name: 'Made' })).status).toBe(201);
    expect((await fetch(`${b.url}/sessions/nope`)).status).toBe(404);
  });
});

/** A raw SSE response read step by step (the stream stays open between reads). */
async function openStream(url: string) {
  const res = await fetch(url);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let text = '';
  return {
    async readUntil(re: RegExp): Promise<string> {
      while (!re.test(text)) {
        const { done, value } = await reader.read();
        if (done) break;
        text += dec.decode(value, { stream: true });
      }
      return text;
    },
  };
}

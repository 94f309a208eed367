import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../log/index.ts';
import { type BrokerEvent, EventQueue } from './event-queue.ts';
import type { PostJson } from './http.ts';

const silent = createLogger({ level: 'silent' });

function ev(reason: string, queryId = 'q'): BrokerEvent {
  return {
    timestamp: new Date().toISOString(),
    eventType: 'Normal',
    reason,
    message: reason,
    data: { queryId },
  };
}

/**
 * A transport double recording the events it accepted (a batch body is an array) and each request's
 * size; `respond` decides each status from the request's first event (0 = network error).
 */
function recorder(respond: (first: BrokerEvent, n: number) => Promise<number> | number = () => 201) {
  const bodies: BrokerEvent[] = [];
  const requests: number[] = [];
  let n = 0;
  const post: PostJson = async (_url, text) => {
    const parsed = JSON.parse(text) as BrokerEvent | BrokerEvent[];
    const events = Array.isArray(parsed) ? parsed : [parsed];
    requests.push(events.length);
    const status = await respond(events[0] as BrokerEvent, n++);
    if (status === 0) throw new TypeError('connect ECONNREFUSED');
    if (status < 400) bodies.push(...events);
    return status;
  };
  return { post, bodies, requests };
}

/** A promise a transport double waits on until the test releases it (a request held in flight). */
function gated(): { gate: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  return { gate, release };
}

describe('EventQueue', () => {
  it('keeps the order of one query while queries are sent concurrently', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const { post, bodies } = recorder(async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
      return 201;
    });
    const q = new EventQueue({ url: 'http://broker', post, logger: silent, concurrency: 4, lingerMs: 0 });
    for (let i = 0; i < 10; i++)
      for (const key of ['a', 'b', 'c', 'd']) q.enqueue(key, ev(`${key}${i}`, key));
    await q.flush();
    for (const key of ['a', 'b', 'c', 'd']) {
      expect(bodies.filter((b) => b.data.queryId === key).map((b) => b.reason)).toEqual(
        Array.from({ length: 10 }, (_, i) => `${key}${i}`),
      );
    }
    expect(maxInFlight).toBe(4);
    expect(q.stats()).toEqual({ queued: 0, inFlight: 0, sent: 40, dropped: 0, failed: 0 });
  });

  it('is bounded: beyond capacity events are dropped and counted, never blocking', async () => {
    const { gate, release } = gated();
    const { post } = recorder(async () => {
      await gate;
      return 201;
    });
    const q = new EventQueue({
      url: 'http://broker',
      post,
      logger: silent,
      capacity: 5,
      concurrency: 1,
      lingerMs: 0,
    });
    const accepted = Array.from({ length: 10 }, (_, i) => q.enqueue('k', ev(`e${i}`)));
    // one event is in flight (taken off the queue), five wait, four are refused
    expect(accepted.filter(Boolean)).toHaveLength(6);
    expect(q.stats()).toMatchObject({ queued: 5, inFlight: 1, dropped: 4 });
    release();
    await q.flush();
    expect(q.stats()).toMatchObject({ queued: 0, sent: 6, dropped: 4, failed: 0 });
  });

  it('sends what queued behind a request in flight as one ordered batch of at most batchSize', async () => {
    const { gate, release } = gated();
    const { post, bodies, requests } = recorder(async (_first, n) => {
      if (n === 0) await gate;
      return 201;
    });
    const q = new EventQueue({ url: 'http://broker', post, logger: silent, batchSize: 3, lingerMs: 0 });
    for (let i = 0; i < 8; i++) q.enqueue('k', ev(`e${i}`, 'k'));
    expect(q.stats()).toMatchObject({ queued: 7, inFlight: 1 });
    release();
    await q.flush();
    expect(requests).toEqual([1, 3, 3, 1]);
    expect(bodies.map((b) => b.reason)).toEqual(Array.from({ length: 8 }, (_, i) => `e${i}`));
    expect(q.stats()).toMatchObject({ queued: 0, inFlight: 0, sent: 8, failed: 0 });
  });

  it('counts every event of a batch the broker refuses as failed', async () => {
    const { gate, release } = gated();
    const { post } = recorder(async (_first, n) => {
      if (n === 0) await gate;
      return n === 0 ? 201 : 400;
    });
    const q = new EventQueue({ url: 'http://broker', post, logger: silent, lingerMs: 0 });
    for (let i = 0; i < 4; i++) q.enqueue('k', ev(`e${i}`, 'k'));
    release();
    await q.flush();
    expect(q.stats()).toMatchObject({ sent: 1, failed: 3 });
  });

  it('retries network errors and 5xx, gives up on 4xx and after maxAttempts, counting failures', async () => {
    const { post, bodies } = recorder((body, n) => {
      if (body.reason === 'flaky') return n < 2 ? 503 : 201;
      if (body.reason === 'refused') return 400;
      if (body.reason === 'down') return 0;
      return 201;
    });
    const q = new EventQueue({ url: 'http://broker', post, logger: silent, maxAttempts: 3, retryBaseMs: 1 });
    q.enqueue('a', ev('flaky'));
    await q.flush();
    q.enqueue('b', ev('refused'));
    q.enqueue('c', ev('down'));
    await q.flush();
    expect(bodies.map((b) => b.reason)).toEqual(['flaky']);
    expect(q.stats()).toMatchObject({ sent: 1, failed: 2, dropped: 0 });
  });

  it('refuses events after close', async () => {
    const { post } = recorder();
    const q = new EventQueue({ url: 'http://broker', post, logger: silent });
    await q.close();
    expect(q.enqueue('a', ev('late'))).toBe(false);
    expect(q.stats().dropped).toBe(1);
  });

  it('gathers the events of several queries into one request after the linger, each query in order', async () => {
    const { post, bodies, requests } = recorder();
    const q = new EventQueue({ url: 'http://broker', post, logger: silent, lingerMs: 20 });
    for (let i = 0; i < 3; i++) for (const key of ['a', 'b', 'c']) q.enqueue(key, ev(`${key}${i}`, key));
    // Nothing leaves before the linger is over.
    expect(requests).toEqual([]);
    expect(q.stats()).toMatchObject({ queued: 9, inFlight: 0 });
    await vi.waitFor(() => expect(requests).toEqual([9]));
    await q.flush();
    expect(bodies.map((b) => b.reason)).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'b2', 'c0', 'c1', 'c2']);
    expect(q.stats()).toMatchObject({ queued: 0, inFlight: 0, sent: 9, failed: 0 });
  });

  it('sends a full batch at once and a flushed queue without waiting for the linger', async () => {
    const { post, requests } = recorder();
    const q = new EventQueue({ url: 'http://broker', post, logger: silent, batchSize: 3, lingerMs: 60_000 });
    for (const key of ['a', 'b', 'c']) q.enqueue(key, ev(key, key));
    expect(requests).toEqual([3]);
    q.enqueue('d', ev('d', 'd'));
    expect(requests).toEqual([3]);
    await q.flush();
    expect(requests).toEqual([3, 1]);
    expect(q.stats()).toMatchObject({ sent: 4, queued: 0 });
  });

  it('keeps a query in one request at a time: its later events wait for the one in flight', async () => {
    const { gate, release } = gated();
    const { post, bodies, requests } = recorder(async (_first, n) => {
      if (n === 0) await gate;
      return 201;
    });
    const q = new EventQueue({ url: 'http://broker', post, logger: silent, lingerMs: 0, concurrency: 4 });
    q.enqueue('a', ev('a0', 'a'));
    q.enqueue('a', ev('a1', 'a'));
    q.enqueue('b', ev('b0', 'b'));
    // a0 is in flight; a1 waits for it while b0 goes out beside it.
    expect(requests).toEqual([1, 1]);
    await vi.waitFor(() => expect(bodies.map((b) => b.reason)).toEqual(['b0']));
    expect(requests).toEqual([1, 1]);
    release();
    await q.flush();
    expect(requests).toEqual([1, 1, 1]);
    expect(bodies.map((b) => b.reason)).toEqual(['b0', 'a0', 'a1']);
  });

  it('loses only the event the broker refuses, not its neighbours from other queries', async () => {
    const { post, bodies, requests } = recorder();
    let refused = 0;
    // The broker validates a batch whole: one bad event refuses the request that carries it.
    const bad: PostJson = async (url, text) => {
      if (!text.includes('"reason":"bad"')) return post(url, text);
      refused++;
      return 400;
    };
    const q = new EventQueue({ url: 'http://broker', post: bad, logger: silent, lingerMs: 5 });
    q.enqueue('a', ev('a0', 'a'));
    q.enqueue('b', ev('bad', 'b'));
    q.enqueue('c', ev('c0', 'c'));
    await q.flush();
    // The batch was refused whole, then each event was sent alone.
    expect(refused).toBe(2);
    expect(requests).toEqual([1, 1]);
    expect(bodies.map((b) => b.reason)).toEqual(['a0', 'c0']);
    expect(q.stats()).toMatchObject({ sent: 2, failed: 1, queued: 0, inFlight: 0 });
  });

  it("sends an ended query's events without lingering, also when they queued behind a request", async () => {
    const { gate, release } = gated();
    const { post, bodies, requests } = recorder(async (_first, n) => {
      if (n === 0) await gate;
      return 201;
    });
    const q = new EventQueue({ url: 'http://broker', post, logger: silent, lingerMs: 60_000, batchSize: 2 });
    q.enqueue('a', ev('a0', 'a'));
    q.enqueue('b', ev('b0', 'b'));
    expect(requests).toEqual([2]); // a full batch goes at once
    q.enqueue('a', ev('a1', 'a'));
    q.enqueue('c', ev('c0', 'c'));
    q.sendNow('c');
    expect(requests).toEqual([2, 1]);
    q.sendNow('a'); // a1 waits behind a0's request, then follows it at once
    release();
    await vi.waitFor(() => expect(requests).toEqual([2, 1, 1]));
    await vi.waitFor(() => expect(bodies.map((b) => b.reason)).toEqual(['c0', 'a0', 'b0', 'a1']));
  });
});

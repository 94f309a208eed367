import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBroker } from '../../pkg/broker/server.ts';
import { json, post, startTestBroker } from './harness.ts';

let b: RunningBroker;
beforeAll(async () => {
  b = await startTestBroker();
});
afterAll(() => b.close());

const ev = (reason: string, queryId: string) => ({
  eventType: 'Normal',
  reason,
  message: reason,
  data: { queryId, sessionId: `s-${queryId}` },
});

describe('POST /events from clients written for the reference broker', () => {
  it('accepts an event without eventType, timestamp and message, defaulting them', async () => {
    const before = Date.now();
    const res = await post(`${b.url}/events`, { reason: 'ToolCallStart', data: { queryId: 'qref' } });
    expect(res.status).toBe(201);
    const stored = await res.json();
    expect(stored).toMatchObject({ eventType: 'Normal', reason: 'ToolCallStart', message: '' });
    expect(Date.parse(stored.timestamp)).toBeGreaterThanOrEqual(before - 1000);
    const listed = await json(fetch(`${b.url}/events/qref`));
    expect(listed.items.map((e: { eventType: string }) => e.eventType)).toEqual(['Normal']);
  });

  it('still requires reason and data.queryId, naming what is missing', async () => {
    const noQuery = await post(`${b.url}/events`, { reason: 'x', data: {} });
    expect(noQuery.status).toBe(400);
    expect((await noQuery.json()).error.message).toContain('data.queryId');
    const noData = await post(`${b.url}/events`, { reason: 'x' });
    expect(noData.status).toBe(400);
    expect((await noData.json()).error.message).toContain('data');
  });
});

describe('POST /events with a batch', () => {
  it('stores an array of events in order and answers them with their sequences', async () => {
    const res = await post(`${b.url}/events`, [
      ev('Start', 'qb'),
      ev('LLMCallStart', 'qb'),
      ev('Done', 'qb'),
    ]);
    expect(res.status).toBe(201);
    const stored = await res.json();
    expect(stored.map((e: { reason: string }) => e.reason)).toEqual(['Start', 'LLMCallStart', 'Done']);
    const seqs = stored.map((e: { sequence: number }) => e.sequence);
    expect(seqs[1]).toBe(seqs[0] + 1);
    expect(seqs[2]).toBe(seqs[1] + 1);
    const listed = await json(fetch(`${b.url}/events/qb`));
    expect(listed.items.map((e: { reason: string }) => e.reason)).toEqual(['Start', 'LLMCallStart', 'Done']);
    const session = await json(fetch(`${b.url}/sessions/s-qb`));
    expect(session.sessionId).toBe('s-qb');
  });

  it('refuses a batch with one bad event as a whole, naming the element and field', async () => {
    const res = await post(`${b.url}/events`, [ev('Fine', 'qbad'), { eventType: 'Normal' }]);
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.message).toContain('1.reason');
    expect((await json(fetch(`${b.url}/events/qbad`))).total).toBe(0);
  });

  it('names the field of a single bad event rather than a bare union failure', async () => {
    const res = await post(`${b.url}/events`, { eventType: 'Loud', reason: 'x' });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toContain('eventType');
  });

  it('refuses an empty batch, one over the limit, and a body that is neither object nor array', async () => {
    const empty = await post(`${b.url}/events`, []);
    expect(empty.status).toBe(400);
    expect((await empty.json()).error.message).toContain('must not be empty');
    const huge = await post(
      `${b.url}/events`,
      Array.from({ length: 1001 }, (_, i) => ev(`r${i}`, 'qhuge')),
    );
    expect(huge.status).toBe(400);
    expect((await huge.json()).error.message).toContain('at most 1000');
    const num = await post(`${b.url}/events`, '5');
    expect(num.status).toBe(400);
    expect((await num.json()).error.message).toMatch(/expected object.*or expected array/);
    expect((await json(fetch(`${b.url}/events/qhuge`))).total).toBe(0);
  });
});

describe('hostile values in events', () => {
  it('answers a NUL character in data.queryId with a 4xx or stores it, never a 5xx', async () => {
    const res = await post(`${b.url}/events`, { reason: 'r', data: { queryId: 'q\u0000nul' } });
    expect(res.status).toBeLessThan(500);
  });
});

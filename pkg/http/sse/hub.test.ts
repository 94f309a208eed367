import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SseHub } from './hub.ts';
import { SseSink } from './sink.ts';
import { watch } from './watch.ts';

/** A ServerResponse stand-in: a stream whose buffered length we control through its consumer. */
function fakeRes(highWaterMark = 1 << 20) {
  const res = new PassThrough({ highWaterMark }) as unknown as ServerResponse & PassThrough;
  const chunks: string[] = [];
  return { res, chunks, drain: () => res.on('data', (d: Buffer) => chunks.push(d.toString())) };
}

describe('SseHub', () => {
  it('replays then goes live with no duplicate or gap, framing each item once', async () => {
    const hub = new SseHub({ heartbeatMs: 60_000 });
    const { res, chunks, drain } = fakeRes();
    drain();
    const sink = new SseSink(res, 1 << 20);
    const history = [1, 2, 3].map((seq) => ({ seq, frame: Buffer.from(`id: ${seq}\n\n`), meta: undefined }));
    const sub = watch({
      hub,
      topic: 't',
      sink,
      after: 0,
      head: 3,
      // A live item published during the replay must come out once, after the history.
      replay: async (after) => {
        hub.publish('t', 3, undefined, 'dup');
        hub.publish('t', 4, undefined, 'four');
        return history.filter((h) => h.seq > after);
      },
    });
    await sub;
    hub.publish('t', 5, undefined, 'five');
    await new Promise((r) => setImmediate(r));
    expect(chunks.join('')).toBe('id: 1\n\nid: 2\n\nid: 3\n\nid: 4\ndata: four\n\nid: 5\ndata: five\n\n');
    hub.stop();
  });

  it('disconnects a subscriber whose buffer overflows and forgets closed sinks at once', () => {
    const hub = new SseHub({ heartbeatMs: 60_000 });
    const { res } = fakeRes(16);
    const sink = new SseSink(res, 64);
    hub.subscribe('t', { sink }, 0).goLive();
    for (let i = 1; i <= 20; i++) hub.publish('t', i, undefined, 'x'.repeat(10));
    expect(sink.closed).toBe(true);
    expect(hub.stats()).toMatchObject({ subscribers: 0, topics: 0, disconnectedSlow: 1 });
    hub.stop();
  });
});

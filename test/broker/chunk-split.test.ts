/**
 * `GET /stream/{query}?max-chunk-size=` against hostile and slow readers (issue 26 item 5): a size
 * below the minimum is a 400; a large chunk split into tiny pieces — megabytes of frames, far more
 * than a subscriber may have buffered — reaches a slow reader whole, because the pieces are made as
 * the socket takes them instead of all at once.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_CHUNK_SIZE } from '../../pkg/broker/chunks/split.ts';
import { brokerConfig } from '../../pkg/broker/config.ts';
import type { RunningBroker } from '../../pkg/broker/server.ts';
import { json, post, startTestBroker } from './harness.ts';

const BUFFER = 256 * 1024;
let b: RunningBroker;
beforeAll(async () => {
  b = await startTestBroker({ sse: { ...brokerConfig().sse, heartbeatMs: 200, maxBufferedBytes: BUFFER } });
});
afterAll(() => b?.close());

describe('max-chunk-size', () => {
  it(`is at least ${MIN_CHUNK_SIZE} bytes: smaller is a 400 that says so`, async () => {
    await post(`${b.url}/stream/small`, [{ choices: [{ delta: { content: 'x' } }] }]);
    for (const bad of ['1', '63', '0']) {
      const res = await fetch(`${b.url}/stream/small?max-chunk-size=${bad}`);
      expect(res.status, bad).toBe(400);
      expect(JSON.stringify(await res.json())).toContain(`at least ${MIN_CHUNK_SIZE}`);
    }
    await post(`${b.url}/stream/small/complete`, '');
    const ok = await fetch(`${b.url}/stream/small?max-chunk-size=${MIN_CHUNK_SIZE}&from-beginning=true`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('[DONE]');
  });

  it('a 2 MB chunk in 64-byte pieces reaches a slow reader whole, past the subscriber buffer', async () => {
    const content = 'abcdefgh'.repeat(256 * 1024);
    const res = await post(`${b.url}/stream/big`, [
      {
        id: 'c1',
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: { content }, finish_reason: 'stop' }],
      },
    ]);
    expect(res.status).toBe(200);
    expect(await json(post(`${b.url}/stream/big/complete`, ''))).toMatchObject({ status: 'completed' });

    // A raw reader that pauses between reads: the socket fills, the broker must wait for it.
    const text = await new Promise<string>((resolve, reject) => {
      const req = request(`${b.url}/stream/big?from-beginning=true&max-chunk-size=64`, (r) => {
        const parts: Buffer[] = [];
        r.on('data', (d: Buffer) => {
          parts.push(d);
          r.pause();
          setTimeout(() => r.resume(), 1);
        });
        r.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
        r.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(text.length).toBeGreaterThan(BUFFER * 4);
    const frames = text.split('\n\n').filter((f) => f.includes('data: {'));
    const pieces = frames.map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)));
    expect(pieces.length).toBe(content.length / 64);
    expect(pieces.map((p) => p.choices[0].delta.content).join('')).toBe(content);
    // Only the last piece carries the id (a resume never skips the rest) and the finish reason.
    expect(frames.filter((f) => f.startsWith('id:') || f.includes('\nid:'))).toHaveLength(1);
    expect(pieces.at(-1).choices[0].finish_reason).toBe('stop');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  }, 60_000);
});

/**
 * Byte caps of the engine's HTTP client against real servers that never stop talking: a whole
 * answer past its cap fails at once, an error answer keeps only its start (the rest is never
 * read), an event stream fails once it has carried its cap; the limits' settings.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, requestJson } from './http.ts';
import {
  AnswerTooLarge,
  boundedText,
  DEFAULT_LIMITS,
  formatBytes,
  upstreamErrorIn,
  upstreamLimits,
} from './upstream.ts';

const KiB = 1024;
let server: http.Server;
let base: string;
/** Bytes each endless answer managed to write before its connection went away. */
const written: Record<string, number> = {};

/** Writes `chunk` until the client goes away, respecting backpressure. */
function endless(res: http.ServerResponse, key: string, chunk: Buffer) {
  written[key] = 0;
  const pump = () => {
    while (!res.destroyed) {
      written[key] = (written[key] ?? 0) + chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  res.on('error', () => {});
  pump();
}

beforeAll(async () => {
  const block = Buffer.alloc(16 * KiB, 'x');
  server = http.createServer((req, res) => {
    req.resume();
    const path = req.url ?? '';
    if (path === '/endless') {
      res.writeHead(200, { 'content-type': 'application/json' });
      endless(res, path, block);
    } else if (path === '/endless-error') {
      res.writeHead(500, { 'content-type': 'application/json' });
      endless(res, path, block);
    } else if (path === '/endless-sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      endless(res, path, Buffer.from(`data: ${'y'.repeat(1000)}\n\n`));
    } else if (path === '/small-error') {
      res
        .writeHead(404, { 'content-type': 'application/json', 'content-length': '17' })
        .end('{"error":"gone"}\n');
    } else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('the client’s caps', () => {
  const limits = { toolBytes: 64 * KiB, memoryBytes: 32 * KiB, modelBytes: 128 * KiB, errorBytes: 4 * KiB };
  const client = createHttpClient({ limits, env: {} });
  afterAll(() => client.close());

  it('an endless answer fails with AnswerTooLarge once past the cap of what was called', async () => {
    const err = await client
      .fetch(`${base}/endless`, { upstream: { kind: 'tool' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AnswerTooLarge);
    expect((err as Error).message).toBe(
      'the tool answer is larger than 64 KiB (ENGINE_MAX_TOOL_ANSWER_BYTES); it was not read further',
    );
    // The server could write a socket's worth beyond the cap, never an unbounded amount.
    expect(written['/endless']).toBeLessThan(64 * KiB + 8 * 1024 * KiB);
  });

  it('an endless error answer: its first bytes, the rest never read', async () => {
    const res = await client.fetch(`${base}/endless-error`, { upstream: { kind: 'model' } });
    expect(res.status).toBe(500);
    expect((await res.text()).length).toBe(4 * KiB);
    const small = await client.fetch(`${base}/small-error`);
    expect(await small.text()).toBe('{"error":"gone"}\n');
  });

  it('an endless event stream fails once it carried its cap', async () => {
    const res = await client.fetch(`${base}/endless-sse`, { upstream: { kind: 'model' } });
    let got = 0;
    const err = await (async () => {
      for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) got += part.length;
    })().catch((e: unknown) => e);
    expect(upstreamErrorIn(err)).toBeInstanceOf(AnswerTooLarge);
    expect(got).toBeLessThanOrEqual(128 * KiB);
  });

  it('memory calls (send, requestJson) read under the memory cap and keep an error short', async () => {
    const err = await requestJson(client.send, 'Memory m: GET /messages', `${base}/endless`, {
      method: 'GET',
      upstream: { kind: 'memory' },
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      'Memory m: GET /messages: the memory answer is larger than 32 KiB (ENGINE_MAX_MEMORY_ANSWER_BYTES); it was not read further',
    );
    const failed = await requestJson(client.send, 'Memory m', `${base}/endless-error`, {
      method: 'GET',
      upstream: { kind: 'memory' },
    }).catch((e: unknown) => e);
    expect((failed as Error).message.length).toBeLessThan(400);
  });

  it('a call without a kind gets the small cap of `other`', async () => {
    const err = await client.fetch(`${base}/endless`).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^the answer is larger than 1 MiB/);
  });
});

describe('limits', () => {
  it('come from the options, then ENGINE_MAX_*, then the defaults; nonsense is refused', () => {
    expect(upstreamLimits({}, {})).toEqual(DEFAULT_LIMITS);
    expect(upstreamLimits({ toolBytes: 4096 }, { ENGINE_MAX_TOOL_ANSWER_BYTES: '9999' }).toolBytes).toBe(
      4096,
    );
    expect(upstreamLimits({}, { ENGINE_MAX_TOOL_ANSWER_BYTES: '9999' }).toolBytes).toBe(9999);
    for (const bad of ['1e', '12', '-5', '1.5'])
      expect(() => upstreamLimits({}, { ENGINE_MAX_ERROR_BODY_BYTES: bad }), bad).toThrow(
        /ENGINE_MAX_ERROR_BODY_BYTES must be a whole number of bytes/,
      );
    expect(formatBytes(16 * 1024 * 1024)).toBe('16 MiB');
    expect(formatBytes(1500)).toBe('1500 bytes');
  });

  it('boundedText cuts long texts at the cap with an ellipsis, never inside a surrogate pair', () => {
    expect(boundedText('short')).toBe('short');
    const cut = boundedText('x'.repeat(5000));
    expect(cut).toHaveLength(1024);
    expect(cut.endsWith('…')).toBe(true);
    const emoji = boundedText(`${'a'.repeat(8)}😀😀`, 10);
    expect(emoji).toBe(`${'a'.repeat(8)}…`);
  });
});

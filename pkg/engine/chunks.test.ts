import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../log/index.ts';
import { ChunkStream } from './chunks.ts';
import type { OpenUpload, SendText } from './http.ts';

/** An upload double: what reached the request body, write by write, and the calls made. */
function recordingHttp() {
  const writes: string[] = [];
  const calls: string[] = [];
  let ended = false;
  const upload: OpenUpload = (url) => {
    calls.push(`upload ${url}`);
    const body = new PassThrough();
    body.on('data', (d: Buffer) => writes.push(d.toString()));
    const status = new Promise<number>((resolve) => body.on('end', () => resolve(200)));
    body.on('end', () => {
      ended = true;
    });
    return { body, status };
  };
  const send: SendText = async (url, init) => {
    calls.push(`${init.method} ${url} after end: ${ended}`);
    return { status: 200, text: '{}' };
  };
  return { writes, calls, http: { upload, send } };
}

const silent = createLogger({ level: 'silent' });
const route = (url: string) => ({ url, namespace: 'ns', headers: () => ({}) });

describe('ChunkStream', () => {
  it('sends the chunks written in one tick as one write, then completes after the upload', async () => {
    const rec = recordingHttp();
    const stream = new ChunkStream(route('http://broker'), 'q 1', rec.http, silent);
    for (const n of [1, 2, 3]) stream.write({ n });
    await new Promise((r) => setImmediate(r));
    stream.write({ n: 4 });
    stream.error({ message: 'cut', type: 'server_error', code: 'x' });
    await stream.complete();
    expect(rec.writes).toEqual([
      '{"n":1}\n{"n":2}\n{"n":3}\n',
      '{"n":4}\n{"error":{"message":"cut","type":"server_error","code":"x"}}\n',
    ]);
    expect(stream.written).toBe(5);
    expect(rec.calls).toEqual([
      'upload http://broker/stream/q%201',
      'POST http://broker/stream/q%201/complete after end: true',
    ]);
  });

  it('completes without an upload when nothing was written', async () => {
    const rec = recordingHttp();
    await new ChunkStream(route('http://broker'), 'q', rec.http, silent).complete();
    expect(rec.calls).toEqual(['POST http://broker/stream/q/complete after end: false']);
  });
});

import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { sseData } from './sse-reader.ts';

function streamOf(parts: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(enc.encode(p));
      c.close();
    },
  });
}

describe('sseData', () => {
  it('yields data payloads across arbitrary chunk boundaries, skipping comments and ids', async () => {
    const out: string[] = [];
    for await (const d of sseData(
      streamOf([': connected\n\nid: 1\nda', 'ta: {"a":1}\n', '\nid: 2\r\ndata: [DONE]\r\n\r\n']),
    ))
      out.push(d);
    expect(out).toEqual(['{"a":1}', '[DONE]']);
  });

  it('joins multi-line data', async () => {
    const out: string[] = [];
    for await (const d of sseData(streamOf(['data: a\ndata: b\n\n']))) out.push(d);
    expect(out).toEqual(['a\nb']);
  });

  it('ends an event at any mix of CRLF and LF without eating the next one', async () => {
    const out: string[] = [];
    for await (const d of sseData(streamOf(['data: a\r\n\ndata: b\n\r\ndata: c\r\n\r\ndata: d\n\n'])))
      out.push(d);
    expect(out).toEqual(['a', 'b', 'c', 'd']);
  });

  it('reads a Node stream of buffers split inside a multi-byte character', async () => {
    const bytes = Buffer.from('data: é€\n\n');
    const out: string[] = [];
    for await (const d of sseData(
      Readable.from([bytes.subarray(0, 7), bytes.subarray(7, 9), bytes.subarray(9)]),
    ))
      out.push(d);
    expect(out).toEqual(['é€']);
  });
});

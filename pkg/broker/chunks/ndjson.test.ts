import { describe, expect, it } from 'vitest';
import { ChunkParseError, parseJsonChunks, readNdjson } from './ndjson.ts';
import type { ChunkText } from './types.ts';

const body = (...parts: string[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of parts) c.enqueue(new TextEncoder().encode(p));
      c.close();
    },
  });

async function lines(...parts: string[]): Promise<ChunkText[]> {
  const out: ChunkText[] = [];
  await readNdjson(body(...parts), async (cs) => {
    out.push(...cs);
  });
  return out;
}

describe('chunk bodies are parsed once and stored as received', () => {
  it('keeps each NDJSON line as it came (spacing and key order included), split across reads', async () => {
    const got = await lines('{"b": 1,  "a":"x"}\n{"err', 'or":{"message":"boom"}}\r\n\n{"last":true}');
    expect(got).toEqual([
      { json: '{"b": 1,  "a":"x"}', isError: false },
      { json: '{"error":{"message":"boom"}}', isError: true },
      { json: '{"last":true}', isError: false },
    ]);
  });

  it('re-serialises a JSON body that spans lines: an SSE data line cannot hold CR or LF', () => {
    expect(parseJsonChunks('{\n  "choices": [1]\r}')).toEqual([{ json: '{"choices":[1]}', isError: false }]);
    expect(parseJsonChunks('  {"a" : 1}  ')).toEqual([{ json: '{"a" : 1}', isError: false }]);
    expect(parseJsonChunks('[{"a":1},{"error":{}}]')).toEqual([
      { json: '{"a":1}', isError: false },
      { json: '{"error":{}}', isError: true },
    ]);
  });

  it('refuses what is not an object, naming the line', async () => {
    expect(() => parseJsonChunks('[1]')).toThrow(ChunkParseError);
    expect(() => parseJsonChunks('null')).toThrow(/must be a JSON object/);
    expect(() => parseJsonChunks('"text"')).toThrow(/must be a JSON object/);
    await expect(lines('{"a":1}\n[2]\n')).rejects.toThrow(/line 2: a chunk must be a JSON object/);
  });

  it('stores the lines before a bad one even when they came in the same read', async () => {
    const stored: string[] = [];
    const read = readNdjson(body('{"a":1}\n{"b":2}\n[3]\n{"c":4}\n'), async (cs) => {
      stored.push(...cs.map((c) => c.json));
    });
    await expect(read).rejects.toThrow(/line 3/);
    expect(stored).toEqual(['{"a":1}', '{"b":2}']);
  });
});

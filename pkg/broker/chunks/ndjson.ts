import { parseJson } from '../../http/index.ts';
import { type ChunkText, chunkText } from './types.ts';

/** A body line that is not a JSON object. */
export class ChunkParseError extends Error {
  override name = 'ChunkParseError';
  readonly line: number;
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.line = line;
  }
}

/** One line's chunk: parsed to check it (and to see whether it is an error), stored as received. */
function parseObject(text: string, line: number): ChunkText {
  let v: unknown;
  try {
    v = parseJson(text);
  } catch (err) {
    throw new ChunkParseError(line, `invalid JSON (${(err as Error).message})`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new ChunkParseError(line, 'a chunk must be a JSON object');
  return chunkText(v as Record<string, unknown>, text);
}

/**
 * NDJSON parsed as it arrives: `onChunk` runs for each complete line as soon as its newline is
 * read (so watchers see chunks live during a long upload), and the last line counts even without a
 * trailing newline. Blank lines are skipped.
 */
export async function readNdjson(
  body: AsyncIterable<Uint8Array>,
  onChunks: (chunks: ChunkText[]) => Promise<void>,
): Promise<number> {
  const decoder = new TextDecoder();
  let buffered = '';
  let line = 0;
  let count = 0;
  const flushLines = async (final: boolean) => {
    const parts = buffered.split('\n');
    buffered = final ? '' : (parts.pop() ?? '');
    const batch: ChunkText[] = [];
    const store = async () => {
      if (!batch.length) return;
      await onChunks(batch);
      count += batch.length;
    };
    for (const p of parts) {
      line++;
      const t = p.trim();
      if (!t) continue;
      try {
        batch.push(parseObject(t, line));
      } catch (err) {
        // The lines before a bad one are stored whether or not they came in the same read.
        await store();
        throw err;
      }
    }
    await store();
  };
  for await (const bytes of body) {
    const text = decoder.decode(bytes, { stream: true });
    buffered += text;
    // Only the new text is searched: searching the whole unfinished line for every piece made a long
    // line sent in tiny pieces (chunked encoding allows one byte each) cost quadratic time.
    if (text.includes('\n')) await flushLines(false);
  }
  buffered += decoder.decode();
  await flushLines(true);
  return count;
}

/** `application/json`: one chunk object (kept as received) or an array of them. */
export function parseJsonChunks(text: string): ChunkText[] {
  let v: unknown;
  try {
    v = parseJson(text);
  } catch (err) {
    throw new ChunkParseError(1, `invalid JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(v)) {
    if (!v || typeof v !== 'object') throw new ChunkParseError(1, 'a chunk must be a JSON object');
    return [chunkText(v as Record<string, unknown>, text.trim())];
  }
  return v.map((c, i) => {
    if (!c || typeof c !== 'object' || Array.isArray(c))
      throw new ChunkParseError(i + 1, 'a chunk must be a JSON object');
    return chunkText(c as Record<string, unknown>);
  });
}

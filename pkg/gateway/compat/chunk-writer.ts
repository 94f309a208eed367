/** OpenAI `chat.completion.chunk` frames of a relayed stream, written in bursts. */
import type { SSEStreamingApi } from 'hono/streaming';
import type { Query } from '../../api/index.ts';
import { chunkOf } from './completion-body.ts';
import { openaiError } from './errors.ts';

function usageOf(q: Query | undefined) {
  const u = q?.status?.tokenUsage;
  return {
    prompt_tokens: u?.promptTokens ?? 0,
    completion_tokens: u?.completionTokens ?? 0,
    total_tokens: u?.totalTokens ?? 0,
  };
}

/**
 * Writes OpenAI chunks: role in the first delta only, one finish chunk, usage, then `[DONE]`.
 * Frames queued in one burst (the chunks of one read from the broker) go out as one write at the
 * end of the tick rather than one socket write each. `delta` resolves once the write before it was
 * taken, so a slow client still holds the relay back.
 */
export function chunkWriter(s: Pick<SSEStreamingApi, 'write'>, model: string, id: string, created: number) {
  let sentRole = false;
  let pending = '';
  let writing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    if (!pending) return writing;
    const frames = pending;
    pending = '';
    // A client that went away fails the write: the relay's abort signal says so, not this promise.
    writing = s.write(frames).then(
      () => {},
      () => {},
    );
    return writing;
  };
  const queue = (data: string) => {
    if (!pending) process.nextTick(flush);
    pending += `data: ${data}\n\n`;
  };
  const write = (data: unknown) => queue(JSON.stringify(data));
  return {
    delta: (delta: Record<string, unknown>, finish: string | null = null): Promise<void> => {
      const d = sentRole ? delta : { role: 'assistant', ...delta };
      sentRole = true;
      write(chunkOf(id, model, created, d, finish));
      return writing;
    },
    usage: (q: Query | undefined) => {
      write({ ...chunkOf(id, model, created, {}), choices: [], usage: usageOf(q) });
      return writing;
    },
    fail: (message: string, type = 'server_error', code = 'query_failed') => {
      write(openaiError(message, type as 'server_error', code));
      queue('[DONE]');
      return flush();
    },
    done: () => {
      queue('[DONE]');
      return flush();
    },
  };
}

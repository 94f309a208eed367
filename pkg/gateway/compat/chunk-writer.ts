/** OpenAI `chat.completion.chunk` frames of a relayed stream, written in bursts. */
import type { SSEStreamingApi } from 'hono/streaming';
import type { TokenUsage } from '../../api/index.ts';
import { TickCoalescer } from '../../http/coalesce/index.ts';
import type { ErrorCode } from '../../http/index.ts';
import { chunkOf } from './completion-body.ts';
import { type OpenAIErrorType, openaiError } from './errors.ts';

function usageOf(u: TokenUsage | undefined) {
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
  let writing: Promise<void> = Promise.resolve();
  const frames = new TickCoalescer((text) => {
    // A client that went away fails the write: the relay's abort signal says so, not this promise.
    writing = s.write(text).then(
      () => {},
      () => {},
    );
  });
  const queue = (data: string) => frames.push(`data: ${data}\n\n`);
  const write = (data: unknown) => queue(JSON.stringify(data));
  /** `[DONE]` and everything queued before it leave now: the stream ends with no tick to wait for. */
  const end = (): Promise<void> => {
    queue('[DONE]');
    frames.flush();
    return writing;
  };
  return {
    delta: (delta: Record<string, unknown>, finish: string | null = null): Promise<void> => {
      const d = sentRole ? delta : { role: 'assistant', ...delta };
      sentRole = true;
      write(chunkOf(id, model, created, d, finish));
      return writing;
    },
    /**
     * A chunk with an empty delta carrying Berth's `berth` extension (docs/approvals.md): the query
     * waits for a decision, or goes on. SDKs pass unknown fields through; plain clients see no text.
     */
    extension: (berth: Record<string, unknown>): Promise<void> => {
      write({ ...chunkOf(id, model, created, {}), berth });
      return writing;
    },
    usage: (usage: TokenUsage | undefined) => {
      write({ ...chunkOf(id, model, created, {}), choices: [], usage: usageOf(usage) });
      return writing;
    },
    /** The error frame and `[DONE]`: a failure after HTTP 200 was sent (the code names it, as a status would). */
    fail: (message: string, type: OpenAIErrorType = 'server_error', code: ErrorCode = 'query_failed') => {
      write(openaiError(message, type, code));
      return end();
    },
    done: end,
  };
}

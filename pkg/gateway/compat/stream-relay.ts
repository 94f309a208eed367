import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { clientLeft } from '../client-left.ts';
import type { ChatRecorder } from '../metrics.ts';
import type { Answer } from './answer.ts';
import { chunkWriter } from './chunk-writer.ts';
import { CompatError } from './errors.ts';

interface RelayInput {
  model: string;
  includeUsage: boolean;
  chat: ChatRecorder;
}

/** Separates the answers of a team's members (each a model call with its own chunk id). */
const TURN_SEPARATOR = '\n\n';

/**
 * OpenAI SSE for a streaming Query: its chunks relayed as `chat.completion.chunk`s. A failure before
 * the first chunk is a plain JSON error (thrown to the error handler); after it, an error frame and
 * `[DONE]`: every stream ends with one of the two. Owns `answer`: closes it when the relay is over.
 */
export async function relayStream(c: Context, answer: Answer, input: RelayInput): Promise<Response> {
  let first: Awaited<ReturnType<Answer['first']>>;
  try {
    first = await answer.first();
  } catch (err) {
    void answer.close();
    throw err;
  }
  if (!first) {
    void answer.close();
    return clientLeft(c);
  }
  const created = Math.floor(Date.now() / 1000);
  return streamSSE(c, async (s) => {
    // The client's stream ends now; the broker's connection is let go of behind it.
    s.onAbort(() => void answer.close());
    try {
      await relay(chunkWriter(s, input.model, answer.id, created), answer, input);
    } finally {
      void answer.close();
    }
  });
}

async function relay(
  out: ReturnType<typeof chunkWriter>,
  answer: Answer,
  { includeUsage, chat }: RelayInput,
): Promise<void> {
  let finish: string | null = null;
  let turn: string | undefined;
  try {
    for await (const chunk of answer.chunks()) {
      if (chunk.berth && typeof chunk.berth === 'object') {
        if (chunk.berth.type === 'input_required') await answer.paused();
        await out.extension(chunk.berth);
        continue;
      }
      for (const choice of chunk.choices ?? []) {
        const text = choice.delta?.content;
        if (text) {
          // A new upstream completion after content was sent is the next member's turn.
          const sep = turn !== undefined && chunk.id !== turn ? TURN_SEPARATOR : '';
          turn = chunk.id;
          await out.delta({ content: sep + text });
          chat.firstToken();
        }
        // One finish chunk at the very end: a team's members each finish their own turn.
        if (choice.finish_reason) finish = choice.finish_reason;
      }
    }
  } catch (err) {
    // Stopped: by the shutdown grace period (the client still listens: tell it), or because the
    // client went away (nobody to tell).
    if (answer.signal.aborted) {
      if (answer.stoppedBy() !== 'shutdown') return chat.end('disconnected');
      chat.end('shutting_down');
      return out.fail(
        'the API service is shutting down; the answer was cut off',
        'server_error',
        'shutting_down',
      );
    }
    const e = err instanceof CompatError ? err : undefined;
    chat.end(e?.type === 'timeout_error' ? 'timeout' : 'error');
    return out.fail(e?.message ?? String(err), e?.type, e?.code);
  }
  await out.delta({}, finish ?? 'stop');
  // Usage is the query's own (summed over every model call); the engine does not forward usage chunks.
  if (includeUsage) await out.usage((await answer.outcome().catch(() => undefined))?.usage);
  await out.done();
  chat.end('ok');
}

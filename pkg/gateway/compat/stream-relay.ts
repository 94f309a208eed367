import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import { type Dispatcher, request } from 'undici';
import type { Query } from '../../api/index.ts';
import { linkSignals } from '../../http/index.ts';
import { brokerAuthHeaders } from '../../http/service-token/index.ts';
import type { GatewayDeps } from '../deps.ts';
import type { ChatRecorder } from '../metrics.ts';
import { chunkWriter } from './chunk-writer.ts';
import { CompatError, shuttingDown } from './errors.ts';
import { sseData } from './sse-reader.ts';

interface RelayInput {
  query: Query;
  model: string;
  includeUsage: boolean;
  /** Resolves with the finished Query (from the informer watch); rejects on timeout or disconnect. */
  finished: () => Promise<Query>;
  chat: ChatRecorder;
  /** Lets go of what waiting for the Query held (called once the relay is over). */
  release: () => void;
}

interface UpstreamChunk {
  id?: string;
  error?: { message?: string; type?: string; code?: string };
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
}

/** Separates the answers of a team's members (each a model call with its own chunk id). */
const TURN_SEPARATOR = '\n\n';

function safeParse(data: string): UpstreamChunk | undefined {
  try {
    return JSON.parse(data) as UpstreamChunk;
  } catch {
    return undefined;
  }
}

/** The JSON error of a failure known before streaming began (the query ran: not retryable). */
function earlyError(e: UpstreamChunk['error'] & {}): CompatError {
  const timeout = e.type === 'timeout_error' || e.code === 'timeout';
  return new CompatError(timeout ? 504 : 500, e.code ?? 'query_failed', e.message ?? 'query failed', {
    type: timeout ? 'timeout_error' : 'server_error',
    retryable: false,
  });
}

/**
 * The query's chunk stream from the broker, through undici's request API: its body is a Node stream,
 * not a web stream (a fetch per streamed completion was a large part of the relay's cost). Aborting
 * `signal` ends the request and the body's iteration.
 */
async function openBrokerStream(brokerUrl: string, id: string, signal: AbortSignal) {
  const url = new URL(`${brokerUrl.replace(/\/$/, '')}/stream/${encodeURIComponent(id)}`);
  url.search = 'from-beginning=true&wait-for-query=60';
  let res: Dispatcher.ResponseData;
  try {
    const headers = { accept: 'text/event-stream', ...brokerAuthHeaders(brokerUrl, url) };
    res = await request(url, { headers, signal });
  } catch (err) {
    throw new CompatError(
      503,
      'broker_unavailable',
      `the broker is not reachable: ${(err as Error).message}`,
      {
        type: 'server_error',
      },
    );
  }
  if (res.statusCode === 200) return sseData(res.body);
  await res.body.dump();
  throw new CompatError(
    502,
    'broker_error',
    `the broker answered HTTP ${res.statusCode} for the query's stream`,
    {
      type: 'server_error',
    },
  );
}

/**
 * OpenAI SSE for a streaming Query: the broker's chunk stream relayed as `chat.completion.chunk`s.
 * An error before the first chunk is a plain JSON error; after it, an error frame and `[DONE]`.
 * Every stream ends with one of the two. A client that goes away aborts the broker subscription.
 */
export async function relayStream(c: Context, deps: GatewayDeps, input: RelayInput): Promise<Response> {
  const abort = new AbortController();
  // The relay stops when it is done (abort), the client goes away, or the shutdown grace period
  // ends — the client is still there then: it gets a final error frame (see `stopped` below).
  // Linked, not AbortSignal.any(): that would stay attached to the long-lived shutdown signal.
  const linked = linkSignals(abort.signal, c.req.raw.signal, deps.shutdown);
  const release = () => {
    linked.dispose();
    input.release();
  };
  let streaming = false;
  try {
    const res = await relay(c, deps, input, abort, linked.signal, () => {
      streaming = true;
      return release;
    });
    return res;
  } finally {
    if (!streaming) release();
  }
}

/** The relay proper; `streams()` is called when the SSE response takes over (it releases at its end). */
async function relay(
  c: Context,
  deps: GatewayDeps,
  input: RelayInput,
  abort: AbortController,
  signal: AbortSignal,
  streams: () => () => void,
): Promise<Response> {
  const id = input.query.metadata.name;
  const created = Math.floor(Date.now() / 1000);
  // Settles once: the finished Query, or undefined when waiting failed (timeout, disconnect).
  let finishedOnce: Promise<Query | undefined> | undefined;
  const finished = () => {
    finishedOnce ??= input.finished().catch(() => undefined);
    return finishedOnce;
  };

  if (!deps.brokerUrl) return singleChunk(c, input, id, created, finished);
  const events = await openBrokerStream(deps.brokerUrl, id, signal);

  // Pull the first payload before committing to SSE so early failures are normal JSON errors. A query
  // that fails before producing any chunk (e.g. canceled before it started) answers at once.
  const firstEvent = events.next().catch((err: Error) => err);
  const raced = await Promise.race([firstEvent, finished().then((q) => ({ query: q }))]);
  if ('query' in raced && raced.query && raced.query.status?.phase !== 'done') {
    abort.abort();
    const st = raced.query.status;
    throw earlyError({
      message: st?.message ?? `query ${st?.phase}`,
      type: /timed? ?out/i.test(st?.message ?? '') ? 'timeout_error' : 'server_error',
    });
  }
  const first = await firstEvent;
  if (first instanceof Error || first.done) {
    abort.abort();
    if (c.req.raw.signal.aborted) return c.body(null, 499 as 400);
    if (deps.shutdown?.aborted) throw shuttingDown();
    throw new CompatError(502, 'stream_ended', 'the query stream ended before any chunk', {
      type: 'server_error',
    });
  }
  const firstData: string = first.value;
  const parsedFirst = safeParse(firstData);
  if (parsedFirst?.error) {
    abort.abort();
    throw earlyError(parsedFirst.error);
  }

  const { chat } = input;
  const release = streams();
  return streamSSE(c, async (s) => {
    try {
      await relayChunks(s);
    } finally {
      // The client's stream ends now; the broker's connection is let go of behind it.
      void letGoOfBroker().finally(release);
    }
  });

  /**
   * The broker's stream is read to its end after `[DONE]` (the broker ends it there), which hands
   * the connection back to undici's pool; otherwise, or if more comes or nothing ends it within a
   * second, the request is aborted, which closes the connection. An unread body would hold it.
   */
  async function letGoOfBroker(): Promise<void> {
    if (abort.signal.aborted) return;
    const timer = setTimeout(() => abort.abort(), 1000);
    try {
      const rest = await events.next();
      if (!rest.done) abort.abort();
    } catch {
      // aborted meanwhile, or the stream broke: nothing left to hold
    } finally {
      clearTimeout(timer);
    }
  }

  async function relayChunks(s: SSEStreamingApi): Promise<void> {
    s.onAbort(() => abort.abort());
    const out = chunkWriter(s, input.model, id, created);
    // The relay was stopped: by the shutdown grace period (the client still listens: tell it), or
    // because the client went away (nobody to tell).
    const stopped = async () => {
      if (deps.shutdown?.aborted && !c.req.raw.signal.aborted) {
        chat.end('shutting_down');
        return out.fail(
          'the API service is shutting down; the answer was cut off',
          'server_error',
          'shutting_down',
        );
      }
      chat.end('disconnected');
    };
    const failed = (message: string, type = 'server_error', code?: string) => {
      chat.end(type === 'timeout_error' ? 'timeout' : 'error');
      return out.fail(message, type, code);
    };
    let finish: string | null = null;
    let turn: string | undefined;
    let sawDone = false;
    try {
      for (let data: string | undefined = firstData; data !== undefined; ) {
        if (signal.aborted) return stopped();
        if (data === '[DONE]') {
          sawDone = true;
          break;
        }
        const chunk = safeParse(data);
        if (chunk?.error)
          return failed(chunk.error.message ?? 'query failed', chunk.error.type, chunk.error.code);
        for (const choice of chunk?.choices ?? []) {
          const text = choice.delta?.content;
          if (text) {
            // A new upstream completion after content was sent is the next member's turn.
            const sep = turn !== undefined && chunk?.id !== turn ? TURN_SEPARATOR : '';
            turn = chunk?.id;
            await out.delta({ content: sep + text });
            chat.firstToken();
          }
          // One finish chunk at the very end: a team's members each finish their own turn.
          if (choice.finish_reason) finish = choice.finish_reason;
        }
        const next = await events.next();
        data = next.done ? undefined : next.value;
      }
    } catch (err) {
      if (signal.aborted) return stopped();
      return failed(`the query stream broke: ${(err as Error).message}`, 'server_error', 'stream_broken');
    }
    if (signal.aborted) return stopped();
    if (!sawDone) return failed('the query stream ended without completing', 'server_error', 'stream_ended');
    await out.delta({}, finish ?? 'stop');
    // Usage is the query's own (summed over every model call); the engine does not forward usage chunks.
    if (input.includeUsage) await out.usage(await finished());
    await out.done();
    chat.end('ok');
  }
}

/** No broker configured: one content chunk from the finished Query, the finish chunk and `[DONE]`. */
async function singleChunk(
  c: Context,
  input: RelayInput,
  id: string,
  created: number,
  finished: () => Promise<Query | undefined>,
) {
  const done = await finished();
  if (!done) {
    if (c.req.raw.signal.aborted) return c.body(null, 499 as 400);
    throw earlyError({ message: `query ${id} did not finish in time`, type: 'timeout_error' });
  }
  const st = done.status;
  if (st?.phase !== 'done')
    throw earlyError({
      message: st?.message ?? `query ${st?.phase}`,
      type: /timed? ?out/i.test(st?.message ?? '') ? 'timeout_error' : 'server_error',
    });
  return streamSSE(c, async (s) => {
    const out = chunkWriter(s, input.model, id, created);
    await out.delta({ content: st.response?.content ?? '' });
    input.chat.firstToken();
    await out.delta({}, 'stop');
    if (input.includeUsage) await out.usage(done);
    await out.done();
    input.chat.end('ok');
  });
}

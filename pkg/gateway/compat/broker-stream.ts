/** The Query's chunk stream from the broker, and the chunks it carries. */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Dispatcher, request } from 'undici';
import { brokerAuthHeaders } from '../../http/service-token/index.ts';
import { CompatError } from './errors.ts';
import { type SseEvent, sseEvents } from './sse-reader.ts';

/** A chunk as the engine writes it to the broker (an OpenAI chunk, or an error with its reason). */
export interface UpstreamChunk {
  id?: string;
  error?: { message?: string; type?: string; code?: string; reason?: string };
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
  /** Berth's extension: the query waits for input, or resumed (docs/approvals.md). */
  berth?: Record<string, unknown>;
}

/** A `data:` payload as a chunk; `[DONE]` or anything that is not JSON is an empty one. */
export function chunkOfData(data: string): UpstreamChunk {
  try {
    return (JSON.parse(data) as UpstreamChunk | null) ?? {};
  } catch {
    return {};
  }
}

/** Attempts to reopen a stream its broker ended for shutdown, and the pause before each. */
const REOPEN_DELAYS_MS = [50, 100, 200, 400, 800, 1000, 1000, 1000, 1000, 1000];
/** Shutdowns one stream may be carried across (a rollout replaces each broker pod once). */
const MAX_RESUMES = 5;

/**
 * `GET /stream/{query}` of the broker through undici's request API: its body is a Node stream, not
 * a web stream (a fetch per streamed completion was a large part of the relay's cost). Aborting
 * `signal` ends the request and the body's iteration. Yields the `data:` payloads.
 *
 * A broker pod that shuts down ends its open streams with a `shutting_down` frame that has no `id:`
 * (docs/observability.md): the stream is then reopened through the same URL (the Service, which
 * routes to a broker still serving) with `Last-Event-ID` of the last record received, so a chat
 * relayed across a broker rollout goes on where it was instead of failing. The frame is passed on
 * only when the stream cannot be reopened.
 */
export async function openBrokerStream(
  brokerUrl: string,
  id: string,
  signal: AbortSignal,
): Promise<AsyncGenerator<string>> {
  return resuming(await requestStream(brokerUrl, id, signal), brokerUrl, id, signal);
}

async function* resuming(
  first: AsyncGenerator<SseEvent>,
  brokerUrl: string,
  id: string,
  signal: AbortSignal,
): AsyncGenerator<string> {
  let source = first;
  let lastId: string | undefined;
  for (let resumes = 0; ; resumes++) {
    let shutdown: string | undefined;
    for await (const e of source) {
      if (e.id !== undefined) lastId = e.id;
      else if (resumes < MAX_RESUMES && isShutdownFrame(e.data)) {
        shutdown = e.data;
        break; // ends this response's iteration, which releases it
      }
      yield e.data;
    }
    if (shutdown === undefined) return;
    const next = await reopen(brokerUrl, id, signal, lastId);
    if (!next) {
      yield shutdown;
      return;
    }
    source = next;
  }
}

/** The shutting-down frame a draining broker ends its streams with (no id: not a stored record). */
function isShutdownFrame(data: string): boolean {
  return data.includes('"shutting_down"') && chunkOfData(data).error?.code === 'shutting_down';
}

/** The stream again after `lastId`, retried while the broker's Service still routes to a pod that refuses; undefined when it cannot be had. */
async function reopen(
  brokerUrl: string,
  id: string,
  signal: AbortSignal,
  lastId: string | undefined,
): Promise<AsyncGenerator<SseEvent> | undefined> {
  for (const ms of REOPEN_DELAYS_MS) {
    if (!(await sleep(ms, true, { signal }).catch(() => false))) return undefined;
    try {
      return await requestStream(brokerUrl, id, signal, { lastId, resume: true });
    } catch (err) {
      // Not known there (an in-memory broker's replacement has none of it): nothing to resume.
      if (err instanceof CompatError && err.code === 'not_found') return undefined;
      // Refused (503 while that pod drains) or unreachable: the next attempt may reach another pod.
    }
  }
  return undefined;
}

/**
 * One request of the stream. The first waits for the Query's stream to start; a resumption does not
 * (`resume`): the stream must already be in the broker's store, else 404 ends the relay.
 */
async function requestStream(
  brokerUrl: string,
  id: string,
  signal: AbortSignal,
  { lastId, resume = false }: { lastId?: string | undefined; resume?: boolean } = {},
): Promise<AsyncGenerator<SseEvent>> {
  const url = new URL(`${brokerUrl.replace(/\/$/, '')}/stream/${encodeURIComponent(id)}`);
  url.search = resume ? 'from-beginning=true' : 'from-beginning=true&wait-for-query=60';
  let res: Dispatcher.ResponseData;
  try {
    const headers: Record<string, string> = {
      accept: 'text/event-stream',
      ...brokerAuthHeaders(brokerUrl, url),
      ...(lastId !== undefined ? { 'last-event-id': lastId } : {}),
    };
    res = await request(url, { headers, signal });
  } catch (err) {
    throw new CompatError('broker_unavailable', `the broker is not reachable: ${(err as Error).message}`);
  }
  if (res.statusCode === 200) return sseEvents(res.body);
  await res.body.dump();
  if (res.statusCode === 404 && resume)
    throw new CompatError('not_found', `the broker no longer has the stream of query ${id}`);
  throw new CompatError('broker_error', `the broker answered HTTP ${res.statusCode} for the query's stream`);
}

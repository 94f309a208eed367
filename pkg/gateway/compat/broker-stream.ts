/** The Query's chunk stream from the broker, and the chunks it carries. */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, type Dispatcher, request } from 'undici';
import { linkSignals } from '../../http/abort/index.ts';
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
/** How long the broker is asked to wait for the Query's stream to start, per request (s). */
const WAIT_FOR_QUERY_SECONDS = 60;
/**
 * Waits for a stream that has not started, one after the other: a Query may stay pending for its
 * Memory or MCP server (docs/controller.md); the reader's own deadline (the chat's wait, the MCP
 * call's end) stops it earlier.
 */
const MAX_WAITS = 10;

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
  opts: { waitSeconds?: number } = {},
): Promise<BrokerStream> {
  const s = { brokerUrl, id, signal, waitSeconds: opts.waitSeconds ?? WAIT_FOR_QUERY_SECONDS };
  const current: CurrentRequest = { ctl: new AbortController(), stalled: false };
  const first = await requestStream(s, { signal: linked(current, signal) });
  return Object.assign(resuming(first, s, current), {
    stalled() {
      current.stalled = true;
      current.ctl.abort(new Error('the broker stream went silent'));
    },
  });
}

/** The data payloads of a Query's stream, resumed across broker shutdowns (see openBrokerStream). */
export interface BrokerStream extends AsyncGenerator<string> {
  /**
   * Says the stream went silent while more is due (its Query ended, no `[DONE]` came): the current
   * request is dropped and the stream resumed after the last record received, from the broker's
   * store. For a live delivery that stalled on one broker pod.
   */
  stalled(): void;
}

interface StreamTarget {
  brokerUrl: string;
  id: string;
  signal: AbortSignal;
  waitSeconds: number;
}

/** The request being read, and whether its abort is a `stalled()` (then resumed, not ended). */
interface CurrentRequest {
  ctl: AbortController;
  stalled: boolean;
  /** Unhooks the previous request's signal from `outer` (pkg/http/abort). */
  dispose?: () => void;
}

/** A fresh controller for the next request, aborted with `outer` too. */
function linked(current: CurrentRequest, outer: AbortSignal): AbortSignal {
  current.dispose?.();
  current.ctl = new AbortController();
  const link = linkSignals(outer, current.ctl.signal);
  current.dispose = link.dispose;
  return link.signal;
}

async function* resuming(
  first: AsyncGenerator<SseEvent>,
  s: StreamTarget,
  current: CurrentRequest,
): AsyncGenerator<string> {
  try {
    yield* resumed(first, s, current);
  } finally {
    current.dispose?.();
  }
}

async function* resumed(
  first: AsyncGenerator<SseEvent>,
  s: StreamTarget,
  current: CurrentRequest,
): AsyncGenerator<string> {
  let source = first;
  let lastId: string | undefined;
  let resumes = 0;
  let waits = 1;
  for (;;) {
    // The broker's own frame (no id: not a stored record) that ended this response, if it is one
    // to read past; or this request given up as silent.
    let ended: { frame?: string; kind: 'shutdown' | 'not-started' | 'stalled' } | undefined;
    try {
      for await (const e of source) {
        if (e.id !== undefined) lastId = e.id;
        else {
          const kind = brokerEnd(e.data);
          if (kind === 'shutdown' && resumes < MAX_RESUMES) ended = { frame: e.data, kind };
          else if (kind === 'not-started' && lastId === undefined && waits < MAX_WAITS && !s.signal.aborted)
            ended = { frame: e.data, kind };
          if (ended) break; // ends this response's iteration, which releases it
        }
        yield e.data;
      }
    } catch (err) {
      if (!current.stalled || s.signal.aborted || resumes >= MAX_RESUMES) throw err;
      ended = { kind: 'stalled' };
    }
    current.stalled = false;
    if (!ended) return;
    let next: AsyncGenerator<SseEvent> | undefined;
    if (ended.kind === 'not-started') {
      waits++;
      next = await requestStream(s, { signal: linked(current, s.signal) }).catch(() => undefined);
    } else {
      resumes++;
      next = await reopen(s, current, lastId);
    }
    if (!next) {
      if (ended.frame === undefined) throw new CompatError('stream_broken', 'the broker stream went silent');
      yield ended.frame;
      return;
    }
    source = next;
  }
}

/**
 * A broker's own end of a stream: it is shutting down (`shutting_down`, a draining pod), or the
 * Query's stream did not start within the wait asked for (`timeout`).
 */
function brokerEnd(data: string): 'shutdown' | 'not-started' | undefined {
  if (!data.includes('"error"')) return undefined;
  const code = chunkOfData(data).error?.code;
  return code === 'shutting_down' ? 'shutdown' : code === 'timeout' ? 'not-started' : undefined;
}

/** The stream again after `lastId`, retried while the broker's Service still routes to a pod that refuses; undefined when it cannot be had. */
async function reopen(
  s: StreamTarget,
  current: CurrentRequest,
  lastId: string | undefined,
): Promise<AsyncGenerator<SseEvent> | undefined> {
  for (const ms of REOPEN_DELAYS_MS) {
    if (!(await sleep(ms, true, { signal: s.signal }).catch(() => false))) return undefined;
    try {
      return await requestStream(s, { signal: linked(current, s.signal), lastId, resume: true });
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
  { brokerUrl, id, waitSeconds }: StreamTarget,
  { signal, lastId, resume = false }: { signal: AbortSignal; lastId?: string | undefined; resume?: boolean },
): Promise<AsyncGenerator<SseEvent>> {
  const url = new URL(`${brokerUrl.replace(/\/$/, '')}/stream/${encodeURIComponent(id)}`);
  url.search = resume ? 'from-beginning=true' : `from-beginning=true&wait-for-query=${waitSeconds}`;
  // A resumption goes over a connection of its own: a kept-alive one stays with the pod it was opened
  // to — maybe the one whose delivery stalled, or one draining — while a new one goes where the
  // Service routes now. Closed once the body is read (`close` waits for it).
  const own = resume ? new Client(url.origin) : undefined;
  let res: Dispatcher.ResponseData;
  try {
    const headers: Record<string, string> = {
      accept: 'text/event-stream',
      ...brokerAuthHeaders(brokerUrl, url),
      ...(lastId !== undefined ? { 'last-event-id': lastId } : {}),
    };
    res = await request(url, { headers, signal, ...(own ? { dispatcher: own } : {}) });
  } catch (err) {
    void own?.destroy();
    throw new CompatError('broker_unavailable', `the broker is not reachable: ${(err as Error).message}`);
  }
  void own?.close().catch(() => undefined);
  if (res.statusCode === 200) return sseEvents(res.body);
  await res.body.dump();
  if (res.statusCode === 404 && resume)
    throw new CompatError('not_found', `the broker no longer has the stream of query ${id}`);
  throw new CompatError('broker_error', `the broker answered HTTP ${res.statusCode} for the query's stream`);
}

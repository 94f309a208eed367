/**
 * The answer to one chat completion, opened once its Query exists: what waits for the Query's end,
 * reads its chunk stream from the broker, and stops both when the client goes away, the shutdown
 * grace period ends, or the answer is closed. The non-streaming handler asks `outcome()`; the
 * streaming one `first()`, then `chunks()`. Every failure is a CompatError in the OpenAI shape; a
 * client that went away is `undefined` (the handler answers 499: nobody reads it).
 */
import type { Context } from 'hono';
import { Kinds, type Query, TERMINAL_PHASES } from '../../api/index.ts';
import { linkSignals } from '../../http/index.ts';
import type { GatewayDeps } from '../deps.ts';
import { type BrokerStream, chunkOfData, openBrokerStream, type UpstreamChunk } from './broker-stream.ts';
import { endOf, endOfStreamError, failureOf, type QueryEnd } from './end-answers.ts';
import { CompatError, shuttingDown } from './errors.ts';

const terminal: ReadonlySet<string | undefined> = new Set(TERMINAL_PHASES);
const isFinished = (q: unknown) => terminal.has((q as Query | undefined)?.status?.phase);

/** How long the broker's stream may take to end after `[DONE]` before its connection is dropped. */
const LET_GO_MS = 1000;
/** How long an `input_required` chunk is held for the Query's status to say so (see `paused`). */
const PAUSE_VISIBLE_MS = 10_000;
/**
 * How long the broker's stream may stay silent once the Query has ended before it is resumed from
 * the broker's store (`BrokerStream.stalled`): the engine wrote every chunk (an error chunk on a
 * failure) and `[DONE]` before the controller wrote the end, so they are due at once.
 */
const STALL_MS = 3000;

export interface Answer {
  /** The Query's name: the completion's id. */
  readonly id: string;
  /** Aborted when the client goes away, the shutdown grace period ends, or the answer is closed. */
  readonly signal: AbortSignal;
  /** Why the answer was stopped from outside: the client left, or the service is shutting down. */
  stoppedBy(): 'client' | 'shutdown' | undefined;
  /** The Query's end (phase → reason, message, usage); undefined: the client left. Memoized. */
  outcome(): Promise<QueryEnd | undefined>;
  /**
   * The first chunk, raced against the Query's end so a Query that fails before producing any
   * answers at once (a JSON error with the status of its end reason). Undefined: the client left.
   */
  first(): Promise<UpstreamChunk | undefined>;
  /** The chunks from the first on, up to `[DONE]`; throws the CompatError of an error chunk or a broken stream. */
  chunks(): AsyncGenerator<UpstreamChunk>;
  /**
   * Resolves once this service's cache shows the Query paused (phase input-required) or ended, at
   * most PAUSE_VISIBLE_MS: the engine streams its `input_required` chunk before the controller
   * writes that phase, and a client deciding as soon as it reads the chunk must find the Query
   * waiting, not get 409 query_not_waiting.
   */
  paused(): Promise<void>;
  /** Lets go of the wait and the broker's stream (its connection back to the pool after `[DONE]`). */
  close(): Promise<void>;
}

export function openAnswer(c: Context, deps: GatewayDeps, query: Query, waitTimeoutMs: number): Answer {
  const name = query.metadata.name;
  const closer = new AbortController();
  // Linked, not AbortSignal.any(), which would stay attached to the long-lived shutdown signal
  // (pkg/http/abort).
  const linked = linkSignals(closer.signal, c.req.raw.signal, deps.shutdown);
  const { signal } = linked;
  const stoppedBy = () =>
    c.req.raw.signal.aborted ? 'client' : deps.shutdown?.aborted ? 'shutdown' : undefined;
  let end: Promise<QueryEnd | undefined> | undefined;
  let events: AsyncGenerator<string> | undefined;
  /** When the relay last read from the broker (the stall watch's clock). */
  let lastRead = Date.now();
  let watchdog: NodeJS.Timeout | undefined;
  /** The payload `chunks()` starts from: the one `first()` read. */
  let next: string | undefined;
  let sawDone = false;
  let closed: Promise<void> | undefined;

  /** Stopped from outside: true when the client left (nobody to answer); the 503 of a shutdown is thrown. */
  const clientGone = (): boolean => {
    const by = stoppedBy();
    if (by === 'shutdown') throw shuttingDown();
    return by === 'client';
  };

  /** Waiting failed: the client left (undefined), the shutdown grace period ended, or the wait timed out. */
  const waitFailed = (err: unknown): undefined => {
    if (clientGone()) return undefined;
    throw new CompatError(
      'timeout',
      `query ${name} did not finish within ${waitTimeoutMs} ms: ${(err as Error).message}`,
      { retryable: false },
    );
  };

  const outcome = () => {
    end ??= deps.cache
      .waitFor(Kinds.Query, deps.namespace, name, isFinished, { timeoutMs: waitTimeoutMs, signal })
      .then((q) => endOf(q as Query), waitFailed);
    return end;
  };

  /** No broker configured: the finished Query's answer as one chunk, then `[DONE]`. */
  async function* whole(): AsyncGenerator<string> {
    const done = await outcome();
    if (!done) return;
    if (done.reason !== 'Succeeded') throw failureOf(done);
    const content = done.query?.status?.response?.content ?? '';
    yield JSON.stringify({ id: name, choices: [{ delta: { content }, finish_reason: 'stop' }] });
    yield '[DONE]';
  }

  async function first(): Promise<UpstreamChunk | undefined> {
    let broker: BrokerStream | undefined;
    try {
      broker = deps.brokerUrl ? await openBrokerStream(deps.brokerUrl, name, signal) : undefined;
    } catch (err) {
      // Not the broker's fault when the request was stopped under it.
      if (clientGone()) return undefined;
      if (!unreachable(err)) throw err;
      // The Query was created and runs: failing the chat would have the SDK retry and run it again.
      // Its answer of record comes once it ends, in one chunk, as without a broker.
      deps.logger.warn(
        { query: name, err: (err as Error).message },
        'chat stream: broker unavailable; answering from the Query',
      );
    }
    const source = broker ?? whole();
    events = source;
    if (broker) watchStalls(broker);
    const firstEvent = source.next().catch((err: Error) => err);
    const ended = outcome().then(
      (q) => ({ ended: q }),
      () => ({ ended: undefined }),
    );
    const raced = await Promise.race([firstEvent, ended]);
    if ('ended' in raced && raced.ended && raced.ended.reason !== 'Succeeded') throw failureOf(raced.ended);
    const got = await firstEvent;
    if (got instanceof CompatError) throw got;
    if (got instanceof Error || got.done) {
      if (clientGone()) return undefined;
      throw new CompatError('stream_ended', 'the query stream ended before any chunk');
    }
    const chunk = chunkOfData(got.value);
    if (chunk.error) throw failureOf(endOfStreamError(chunk.error));
    next = got.value;
    return chunk;
  }

  async function* chunks(): AsyncGenerator<UpstreamChunk> {
    const relayed = new RelayedText();
    for (let data = next; ; ) {
      if (signal.aborted) throw new Error('the answer was stopped');
      let lost: CompatError | undefined;
      if (data === undefined)
        lost = new CompatError('stream_ended', 'the query stream ended without completing');
      else if (data === '[DONE]') {
        sawDone = true;
        return;
      } else {
        const chunk = chunkOfData(data);
        if (chunk.error) throw failureOf(endOfStreamError(chunk.error));
        relayed.add(chunk);
        yield chunk;
        try {
          const read = await events?.next();
          lastRead = Date.now();
          data = read?.done ? undefined : read?.value;
        } catch (err) {
          if (signal.aborted) throw err;
          lost = new CompatError('stream_broken', `the query stream broke: ${(err as Error).message}`);
        }
      }
      if (lost) {
        const rest = await recordedRest(relayed);
        if (rest === undefined) throw lost;
        yield rest;
        sawDone = true;
        return;
      }
    }
  }

  /**
   * The broker's delivery of a Query's chunks was lost and could not be resumed. A succeeded Query
   * records its answer (`status.response.content`): when what was relayed is the start of it, the
   * rest goes out as the last chunk, so the client gets the answer of record rather than an error.
   * Undefined when that cannot be said (the Query failed, or several model calls were streamed).
   */
  async function recordedRest(relayed: RelayedText): Promise<UpstreamChunk | undefined> {
    const done = await outcome().catch(() => undefined);
    if (done?.reason !== 'Succeeded') return undefined;
    const rest = relayed.restOf(done.query?.status?.response?.content);
    if (rest === undefined) return undefined;
    return {
      id: relayed.turn ?? name,
      choices: [{ delta: rest ? { content: rest } : {}, finish_reason: 'stop' }],
    };
  }

  /**
   * After `[DONE]` the broker ends its stream: reading that end hands the connection back to
   * undici's pool (true). Otherwise, or if more comes or nothing ends it in time, the request is to
   * be aborted, which closes the connection (an unread body would hold it).
   */
  async function endedCleanly(): Promise<boolean> {
    if (!events || !sawDone || signal.aborted) return false;
    const timer = setTimeout(() => closer.abort(), LET_GO_MS);
    try {
      return !!(await events.next()).done;
    } catch {
      return false; // aborted meanwhile, or the stream broke
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Once the Query has ended, a stream that stays silent STALL_MS without its `[DONE]` is
   * resumed from the broker's store: a live delivery stalled on one broker pod (seen during a
   * rollout of every Deployment) must not hold an answer that is complete.
   */
  function watchStalls(stream: BrokerStream) {
    void outcome().then(
      (q) => {
        if (!q || sawDone || signal.aborted) return;
        lastRead = Math.max(lastRead, Date.now());
        watchdog = setInterval(() => {
          if (sawDone || signal.aborted) return clearInterval(watchdog);
          if (Date.now() - lastRead < STALL_MS) return;
          lastRead = Date.now();
          stream.stalled();
        }, STALL_MS / 3);
        watchdog.unref();
      },
      () => undefined,
    );
  }

  const close = () => {
    clearInterval(watchdog);
    closed ??= endedCleanly().then((clean) => {
      // Aborting ends the broker's request and a wait still pending. After a clean end the wait is
      // left to settle: the engine ends the stream just before its outcome, which ends the wait.
      if (!clean) closer.abort();
      linked.dispose();
    });
    return closed;
  };

  const paused = async () => {
    const shown = (q: unknown) => {
      const phase = (q as Query | undefined)?.status?.phase;
      return phase === 'input-required' || terminal.has(phase);
    };
    await deps.cache
      .waitFor(Kinds.Query, deps.namespace, name, shown, { timeoutMs: PAUSE_VISIBLE_MS, signal })
      .catch(() => undefined); // past the bound, or stopped: the chunk goes out as it is
  };

  return { id: name, signal, stoppedBy, outcome, first, chunks, paused, close };
}

/** The broker's stream could not be opened (unreachable, or an error status). */
const unreachable = (err: unknown) =>
  err instanceof CompatError && (err.code === 'broker_unavailable' || err.code === 'broker_error');

/** The content relayed from one model call's chunks, to be completed from the Query's record. */
class RelayedText {
  #text = '';
  /** The upstream completion the content came from (its chunks' id). */
  turn: string | undefined;
  /** Chunks of more than one model call were relayed: their text is not the record's. */
  #mixed = false;

  add(chunk: UpstreamChunk): void {
    if (chunk.id && this.turn !== undefined && chunk.id !== this.turn) this.#mixed = true;
    this.turn ??= chunk.id;
    for (const choice of chunk.choices ?? []) this.#text += choice.delta?.content ?? '';
  }

  /** What `recorded` has after the relayed content; undefined unless it starts with it and one model call was streamed. */
  restOf(recorded: string | undefined): string | undefined {
    if (recorded === undefined || this.#mixed || !recorded.startsWith(this.#text)) return undefined;
    return recorded.slice(this.#text.length);
  }
}

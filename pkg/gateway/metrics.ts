import type { Env, MiddlewareHandler } from 'hono';
import { Counter, Histogram, Registry } from 'prom-client';
import { httpMetrics } from '../http/index.ts';

/** How a chat completion ended, as the `outcome` label says it. */
export type ChatOutcome =
  /** Answered (or streamed to `[DONE]`). */
  | 'ok'
  /** Refused before a query ran: bad request, unknown model (4xx). */
  | 'rejected'
  /** The query failed, or its stream broke (5xx, or an error frame). */
  | 'error'
  /** The query did not finish in time (504, or a timeout frame). */
  | 'timeout'
  /** The client went away first. */
  | 'disconnected'
  /** Ended by the API service's shutdown grace period. */
  | 'shutting_down';

/** One chat completion being measured; every method is safe to call more than once. */
export interface ChatRecorder {
  /** What the request asked for, once read: streaming or not, the target kind (agent, team, ...). */
  describe(what: { stream?: boolean; targetType?: string }): void;
  /** The first content was written to a stream. */
  firstToken(): void;
  end(outcome: ChatOutcome): void;
}

export const NO_CHAT: ChatRecorder = { describe() {}, firstToken() {}, end() {} };

// A chat completion runs a whole query: 50 ms (demo model) up to the 330 s wait limit.
const CHAT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 330];
const TTFT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The API service's Prometheus metrics (`berth_api_*`): requests by route, method and status with
 * latency (pkg/http's middleware), chat completions with their duration and time to first token,
 * and authentication failures by reason (set by pkg/auth's middleware as `authFailure`).
 */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly middleware: MiddlewareHandler<Env>;
  readonly #chats: Counter<'target_type' | 'stream' | 'outcome'>;
  readonly #chatSeconds: Histogram<'target_type' | 'stream' | 'outcome'>;
  readonly #ttft: Histogram<'target_type'>;

  constructor() {
    const registers = [this.registry];
    const authFailures = new Counter({
      name: 'berth_api_auth_failures_total',
      help: 'Requests refused by authentication, by reason (missing_credentials, invalid_token, api_key_revoked, ...)',
      labelNames: ['reason'],
      registers,
    });
    this.middleware = httpMetrics({
      registry: this.registry,
      prefix: 'berth_api_',
      onRequest: (c) => {
        const reason = c.get('authFailure');
        if (reason) authFailures.inc({ reason });
      },
    });
    const labelNames = ['target_type', 'stream', 'outcome'] as const;
    this.#chats = new Counter({
      name: 'berth_api_chat_completions_total',
      help: 'Chat completions (/compat/v1/chat/completions) by target type, streaming and outcome',
      labelNames,
      registers,
    });
    this.#chatSeconds = new Histogram({
      name: 'berth_api_chat_completion_duration_seconds',
      help: 'From request to the last byte of the answer (the whole stream when streaming)',
      labelNames,
      buckets: CHAT_BUCKETS,
      registers,
    });
    this.#ttft = new Histogram({
      name: 'berth_api_chat_completion_time_to_first_token_seconds',
      help: 'Streaming chat completions: from request to the first content chunk sent to the client',
      labelNames: ['target_type'],
      buckets: TTFT_BUCKETS,
      registers,
    });
  }

  /** Starts measuring one chat completion (the clock starts now). */
  chat(): ChatRecorder {
    const start = performance.now();
    const seconds = () => (performance.now() - start) / 1000;
    let targetType = 'unknown';
    let stream = false;
    let sawFirst = false;
    let ended = false;
    return {
      describe: (what) => {
        if (what.targetType) targetType = what.targetType;
        if (what.stream !== undefined) stream = what.stream;
      },
      firstToken: () => {
        if (sawFirst || !stream) return;
        sawFirst = true;
        this.#ttft.observe({ target_type: targetType }, seconds());
      },
      end: (outcome) => {
        if (ended) return;
        ended = true;
        const labels = { target_type: targetType, stream: String(stream), outcome };
        this.#chats.inc(labels);
        this.#chatSeconds.observe(labels, seconds());
      },
    };
  }
}

import type { Context, Hono } from 'hono';
import { Kinds, type Query, TERMINAL_PHASES } from '../../api/index.ts';
import { HttpError, linkSignals, parseJsonBody, requireMediaType } from '../../http/index.ts';
import { ignoreNotFound } from '../../kube/client/helpers.ts';
import type { GatewayDeps } from '../deps.ts';
import { type ChatOutcome, type ChatRecorder, NO_CHAT } from '../metrics.ts';
import { completionOf } from './completion-body.ts';
import { CompatError, renderOpenAIError, shuttingDown } from './errors.ts';
import { TARGET_KINDS } from './models.ts';
import { buildQuery } from './query-factory.ts';
import { type ChatRequest, chatRequest } from './schemas.ts';
import { relayStream } from './stream-relay.ts';

export interface CompletionOptions {
  /** How long a request waits for its Query to finish before answering 504. */
  waitTimeoutMs: number;
}

const terminal: ReadonlySet<string | undefined> = new Set(TERMINAL_PHASES);
const isFinished = (q: unknown) => terminal.has((q as Query | undefined)?.status?.phase);

/** The validated request; malformed JSON throws from `JSON.parse` into the error handler (400). */
async function readRequest(c: Context): Promise<ChatRequest> {
  const parsed = chatRequest.safeParse(parseJsonBody(c, await c.req.text()));
  if (!parsed.success) {
    // OpenAI names one parameter per error: the first issue's.
    const issue = parsed.error.issues[0];
    const param = issue?.path.join('.') || null;
    throw new CompatError(
      400,
      'invalid_value',
      `${param ? `${param}: ` : ''}${issue?.message ?? 'invalid request'}`,
      {
        type: 'invalid_request_error',
        param,
      },
    );
  }
  return parsed.data;
}

/** The outcome label of a completion that failed with `err` before streaming (or instead of it). */
function outcomeOf(err: unknown, c: Context): ChatOutcome {
  if (c.req.raw.signal.aborted) return 'disconnected';
  if (err instanceof CompatError && err.code === 'shutting_down') return 'shutting_down';
  const status = err instanceof HttpError ? err.status : 500;
  if (status === 504) return 'timeout';
  return status < 500 ? 'rejected' : 'error';
}

/**
 * A chat request is JSON (what every OpenAI SDK sends, parameters such as `charset` allowed): any
 * other media type is a 415 in the OpenAI shape, before the body is read or parsed.
 */
const jsonOnly = requireMediaType(['application/json'], (c, message) =>
  renderOpenAIError(
    c,
    new CompatError(415, 'unsupported_media_type', message, { type: 'invalid_request_error' }),
  ),
);

/** `POST /chat/completions` (under /compat/v1): runs the request as a Query and answers like OpenAI. */
export function mountCompletionRoutes(app: Hono, deps: GatewayDeps, opts: CompletionOptions) {
  app.post('/chat/completions', jsonOnly, async (c) => {
    const chat = deps.metrics?.chat() ?? NO_CHAT;
    try {
      const res = await complete(c, deps, opts, chat);
      // A stream's outcome is recorded by the relay when it ends.
      if (!res.headers.get('content-type')?.startsWith('text/event-stream'))
        chat.end(res.status === 499 ? 'disconnected' : res.ok ? 'ok' : 'rejected');
      return res;
    } catch (err) {
      chat.end(outcomeOf(err, c));
      throw err;
    }
  });
}

async function complete(
  c: Context,
  deps: GatewayDeps,
  opts: CompletionOptions,
  chat: ChatRecorder,
): Promise<Response> {
  const req = await readRequest(c);
  chat.describe({ stream: !!req.stream });
  // A request naming no runnable target throws ChatRequestError (a 400 naming the parameter).
  let query = buildQuery(req, deps.namespace);
  const { type, name } = query.spec.target;
  chat.describe({ targetType: type });
  const target = { namespace: deps.namespace, name };
  if (!(await ignoreNotFound(deps.client.get(TARGET_KINDS[type], target))))
    throw new CompatError(
      404,
      'model_not_found',
      `The model '${req.model}' does not exist in namespace ${deps.namespace}`,
      { type: 'not_found_error', param: 'model' },
    );
  // Waiting ends when the client goes away or the shutdown grace period is over (linked, not
  // AbortSignal.any(), which would stay attached to the long-lived shutdown signal: pkg/http/abort).
  const linked = linkSignals(c.req.raw.signal, deps.shutdown);
  const { signal } = linked;
  let handedOver = false;
  try {
    // Subscribe before creating so no status change can slip between create and wait.
    const finished = () =>
      deps.cache.waitFor(Kinds.Query, deps.namespace, query.metadata.name, isFinished, {
        timeoutMs: opts.waitTimeoutMs,
        signal,
      }) as Promise<Query>;
    // A refusal is a KubeError: the sub-app's handler answers it (errors.ts, kubeErrorToCompat).
    query = await deps.client.create(Kinds.Query, query);
    if (req.stream) {
      handedOver = true; // the relay releases the signal when its stream ends
      return relayStream(c, deps, {
        query,
        model: req.model,
        includeUsage: !!req.stream_options?.include_usage,
        finished,
        chat,
        release: linked.dispose,
      });
    }
    let done: Query;
    try {
      done = await finished();
    } catch (err) {
      // Waiting failed: the client went away (nobody to answer), shutdown, or the wait timed out.
      if (c.req.raw.signal.aborted) return c.body(null, 499 as 400);
      if (deps.shutdown?.aborted) throw shuttingDown();
      throw new CompatError(
        504,
        'timeout',
        `query ${query.metadata.name} did not finish within ${opts.waitTimeoutMs} ms: ${(err as Error).message}`,
        { type: 'timeout_error', retryable: false },
      );
    }
    const phase = done.status?.phase;
    if (phase !== 'done') {
      const timedOut = /timed? ?out|deadline/i.test(done.status?.message ?? '');
      throw new CompatError(
        timedOut ? 504 : 500,
        phase === 'canceled' ? 'query_canceled' : 'query_failed',
        done.status?.message ?? `query ${phase}`,
        { type: timedOut ? 'timeout_error' : 'server_error', retryable: false },
      );
    }
    return c.json(completionOf(done, req.model));
  } finally {
    if (!handedOver) linked.dispose();
  }
}

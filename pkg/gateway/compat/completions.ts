import type { Context, Hono } from 'hono';
import { Kinds, type Query, TERMINAL_PHASES } from '../../api/index.ts';
import { ignoreNotFound } from '../../kube/client/helpers.ts';
import type { GatewayDeps } from '../deps.ts';
import { completionOf } from './completion-body.ts';
import { CompatError } from './errors.ts';
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

/** The validated request; malformed JSON throws from `c.req.json()` into the error handler (400). */
async function readRequest(c: Context): Promise<ChatRequest> {
  const parsed = chatRequest.safeParse(await c.req.json());
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

/** `POST /chat/completions` (under /compat/v1): runs the request as a Query and answers like OpenAI. */
export function mountCompletionRoutes(app: Hono, deps: GatewayDeps, opts: CompletionOptions) {
  app.post('/chat/completions', async (c) => {
    const req = await readRequest(c);
    // A request naming no runnable target throws ChatRequestError (a 400 naming the parameter).
    let query = buildQuery(req, deps.namespace);
    const { type, name } = query.spec.target;
    const target = { namespace: deps.namespace, name };
    if (!(await ignoreNotFound(deps.client.get(TARGET_KINDS[type], target))))
      throw new CompatError(
        404,
        'model_not_found',
        `The model '${req.model}' does not exist in namespace ${deps.namespace}`,
        { type: 'not_found_error', param: 'model' },
      );
    // Subscribe before creating so no status change can slip between create and wait.
    const finished = () =>
      deps.cache.waitFor(Kinds.Query, deps.namespace, query.metadata.name, isFinished, {
        timeoutMs: opts.waitTimeoutMs,
        signal: c.req.raw.signal,
      }) as Promise<Query>;
    // A refusal is a KubeError: the sub-app's handler answers it (errors.ts, kubeErrorToCompat).
    query = await deps.client.create(Kinds.Query, query);
    if (req.stream)
      return relayStream(c, deps, {
        query,
        model: req.model,
        includeUsage: !!req.stream_options?.include_usage,
        finished,
      });
    let done: Query;
    try {
      done = await finished();
    } catch (err) {
      // Waiting failed: the client went away (nobody to answer) or the wait timed out.
      if (c.req.raw.signal.aborted) return c.body(null, 499 as 400);
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
  });
}

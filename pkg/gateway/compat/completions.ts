import type { Context } from 'hono';
import { type Query, queryKind, TERMINAL_PHASES } from '../../api/index.ts';
import { KubeError } from '../../kube/errors.ts';
import type { GatewayDeps } from '../deps.ts';
import type { AnyOpenAPIHono } from '../openapi-route.ts';
import { infoOf } from '../routes/resources.ts';
import { completionOf } from './completion-body.ts';
import { sendOpenAIError } from './errors.ts';
import { TARGET_PLURALS } from './models.ts';
import { buildQuery, ChatRequestError } from './query-factory.ts';
import { type ChatRequest, chatRequest } from './schemas.ts';
import { relayStream } from './stream-relay.ts';

export interface CompletionOptions {
  /** How long a request waits for its Query to finish before answering 504. */
  waitTimeoutMs: number;
}

const isFinished = (q: unknown) => TERMINAL_PHASES.includes((q as Query | undefined)?.status?.phase as never);

async function readRequest(c: Context): Promise<ChatRequest | Response> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch (err) {
    return sendOpenAIError(
      c,
      400,
      `request body is not valid JSON: ${(err as Error).message}`,
      'invalid_request_error',
      'invalid_json',
    );
  }
  const parsed = chatRequest.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue?.path.join('.') || null;
    return sendOpenAIError(
      c,
      400,
      `${param ? `${param}: ` : ''}${issue?.message ?? 'invalid request'}`,
      'invalid_request_error',
      'invalid_value',
      param,
    );
  }
  return parsed.data;
}

/** `POST /compat/v1/chat/completions`: runs the request as a Query and answers like OpenAI. */
export function mountCompletionRoutes(app: AnyOpenAPIHono, deps: GatewayDeps, opts: CompletionOptions) {
  app.post('/compat/v1/chat/completions', async (c) => {
    const req = await readRequest(c);
    if (req instanceof Response) return req;
    let query: Query;
    try {
      query = buildQuery(req, deps.namespace);
    } catch (err) {
      if (err instanceof ChatRequestError)
        return sendOpenAIError(c, err.status, err.message, 'invalid_request_error', err.code, err.param);
      throw err;
    }
    const { type, name } = query.spec.target;
    if (!deps.cache.get(TARGET_PLURALS[type], deps.namespace, name)) {
      return sendOpenAIError(
        c,
        404,
        `The model '${req.model}' does not exist in namespace ${deps.namespace}`,
        'not_found_error',
        'model_not_found',
        'model',
      );
    }
    // Subscribe before creating so no status change can slip between create and wait.
    const finished = () =>
      deps.cache.waitFor('queries', deps.namespace, query.metadata.name, isFinished, {
        timeoutMs: opts.waitTimeoutMs,
        signal: c.req.raw.signal,
      }) as Promise<Query>;
    try {
      query = (await deps.writer.create(
        infoOf(queryKind),
        deps.namespace,
        query as never,
      )) as unknown as Query;
    } catch (err) {
      const e = KubeError.from(err, 'create Query');
      deps.logger.warn({ err: e.message, code: e.code }, 'chat completion: creating the query failed');
      return sendOpenAIError(
        c,
        e.code === 422 ? 400 : 502,
        e.message,
        e.code === 422 ? 'invalid_request_error' : 'server_error',
        'query_create_failed',
      );
    }
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
      if (c.req.raw.signal.aborted) return c.body(null, 499 as 400);
      return sendOpenAIError(
        c,
        504,
        `query ${query.metadata.name} did not finish within ${opts.waitTimeoutMs} ms: ${(err as Error).message}`,
        'timeout_error',
        'timeout',
        null,
        false,
      );
    }
    const phase = done.status?.phase;
    if (phase !== 'done') {
      const timedOut = /timed? ?out|deadline/i.test(done.status?.message ?? '');
      return sendOpenAIError(
        c,
        timedOut ? 504 : 500,
        done.status?.message ?? `query ${phase}`,
        timedOut ? 'timeout_error' : 'server_error',
        phase === 'canceled' ? 'query_canceled' : 'query_failed',
        null,
        false,
      );
    }
    return c.json(completionOf(done, req.model));
  });
}

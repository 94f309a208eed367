import type { Context, Hono } from 'hono';
import { Kinds } from '../../api/index.ts';
import { HttpError, parseJsonBody, requireMediaType } from '../../http/index.ts';
import { ignoreNotFound } from '../../kube/client/helpers.ts';
import { CLIENT_CLOSED_REQUEST, clientLeft } from '../client-left.ts';
import type { GatewayDeps } from '../deps.ts';
import { type ChatOutcome, type ChatRecorder, NO_CHAT } from '../metrics.ts';
import { openAnswer } from './answer.ts';
import { completionOf } from './completion-body.ts';
import { failureOf, QueryEndedError } from './end-answers.ts';
import { CompatError, renderOpenAIError } from './errors.ts';
import { TARGET_KINDS } from './models.ts';
import { buildQuery } from './query-factory.ts';
import { type ChatRequest, chatRequest } from './schemas.ts';
import { relayStream } from './stream-relay.ts';

export interface CompletionOptions {
  /** How long a request waits for its Query to finish before answering 504. */
  waitTimeoutMs: number;
}

/** The validated request; malformed JSON throws from `JSON.parse` into the error handler (400). */
async function readRequest(c: Context): Promise<ChatRequest> {
  const parsed = chatRequest.safeParse(parseJsonBody(c, await c.req.text()));
  if (!parsed.success) {
    // OpenAI names one parameter per error: the first issue's.
    const issue = parsed.error.issues[0];
    const param = issue?.path.join('.') || null;
    throw new CompatError(
      'invalid_value',
      `${param ? `${param}: ` : ''}${issue?.message ?? 'invalid request'}`,
      {
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
  // A query that ran and failed is an error whatever its status (a 4xx says it cannot run as asked).
  if (err instanceof QueryEndedError) return err.reason === 'Timeout' ? 'timeout' : 'error';
  const status = err instanceof HttpError ? err.status : 500;
  if (status === 504) return 'timeout';
  return status < 500 ? 'rejected' : 'error';
}

/**
 * A chat request is JSON (what every OpenAI SDK sends, parameters such as `charset` allowed): any
 * other media type is a 415 in the OpenAI shape, before the body is read or parsed.
 */
const jsonOnly = requireMediaType(['application/json'], (c, message) =>
  renderOpenAIError(c, new CompatError('unsupported_media_type', message)),
);

/** `POST /chat/completions` (under /compat/v1): runs the request as a Query and answers like OpenAI. */
export function mountCompletionRoutes(app: Hono, deps: GatewayDeps, opts: CompletionOptions) {
  app.post('/chat/completions', jsonOnly, async (c) => {
    const chat = deps.metrics?.chat() ?? NO_CHAT;
    try {
      const res = await complete(c, deps, opts, chat);
      // A stream's outcome is recorded by the relay when it ends.
      if (!res.headers.get('content-type')?.startsWith('text/event-stream'))
        chat.end(res.status === CLIENT_CLOSED_REQUEST ? 'disconnected' : res.ok ? 'ok' : 'rejected');
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
      'model_not_found',
      `The model '${req.model}' does not exist in namespace ${deps.namespace}`,
      { param: 'model' },
    );
  // A refusal is a KubeError: the sub-app's handler answers it (errors.ts, kubeErrorToCompat).
  query = await deps.client.create(Kinds.Query, query);
  const answer = openAnswer(c, deps, query, opts.waitTimeoutMs);
  if (req.stream) {
    const includeUsage = !!req.stream_options?.include_usage;
    return relayStream(c, answer, { model: req.model, includeUsage, chat });
  }
  try {
    const end = await answer.outcome();
    if (!end) return clientLeft(c);
    if (end.reason !== 'Succeeded' || !end.query) throw failureOf(end);
    return c.json(completionOf(end.query, req.model));
  } finally {
    void answer.close();
  }
}

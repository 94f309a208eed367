/**
 * The built-in evaluator (`berth up` serves it; docs/evaluations.md): the evaluator contract —
 * `POST /evaluate` with `{type, input, output, parameters?, query?}` answers `{score, passed,
 * reasoning, metrics}` — scoring by rule (`exact`, `contains`, `regex` against `expected`) or by
 * asking a Model (`llm`). Built on pkg/http (request id, body and depth limits, one error envelope);
 * loopback only: the controller of the same `berth up` is its client.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { z } from 'zod';
import type { ResourceLookup } from '../engine/contract.ts';
import { createHttpClient } from '../engine/http.ts';
import { ModelClients } from '../engine/model-client.ts';
import {
  bodyLimit,
  errorHandler,
  httpError,
  jsonDepthLimit,
  listenHttp,
  mediaTypeOf,
  mountHealthRoutes,
  notFoundHandler,
  parseJsonBody,
  requestId,
  validationError,
} from '../http/index.ts';
import type { Logger } from '../log/index.ts';
import { createModelJudge, JudgeFailed, type JudgeRequest } from './judge.ts';
import { BadParameters, RULE_MODES, type RuleMode, scoreByRule, type Verdict } from './rules.ts';

/** The default port of `berth up --evaluator-port`: the address the sample Evaluator names. */
export const BUILTIN_EVALUATOR_PORT = 9100;
/** A query's response may be long; the contract's fields are strings, nothing else is large. */
const BODY_LIMIT = 4 * 1024 * 1024;

const evaluateBody = z.object({
  type: z.enum(['direct', 'query']),
  input: z.string(),
  output: z.string(),
  parameters: z.record(z.string(), z.string()).optional(),
  query: z.record(z.string(), z.unknown()).optional(),
});

export type Judge = (req: JudgeRequest, signal: AbortSignal) => Promise<Verdict>;

export interface EvaluatorAppOptions {
  logger: Logger;
  /** `mode: llm`; without it that mode is a 400 saying so. */
  judge?: Judge;
}

/** Scores one request; BadParameters for what no retry can fix. */
async function score(body: z.infer<typeof evaluateBody>, judge: Judge | undefined, signal: AbortSignal) {
  const p = body.parameters ?? {};
  const mode = p.mode ?? 'exact';
  if (mode === 'llm') {
    if (!judge) throw new BadParameters('mode llm needs a judge (this evaluator has none)');
    return judge({ input: body.input, output: body.output, parameters: p }, signal);
  }
  if (!RULE_MODES.includes(mode as RuleMode))
    throw new BadParameters(`unknown mode ${JSON.stringify(mode)}: use exact, contains, regex or llm`);
  return scoreByRule(mode as RuleMode, body.output, p);
}

export function evaluatorApp(o: EvaluatorAppOptions): OpenAPIHono {
  const app = new OpenAPIHono();
  app.use('*', requestId());
  app.use('*', bodyLimit(BODY_LIMIT));
  app.use('*', jsonDepthLimit());
  app.onError(errorHandler(o.logger));
  app.notFound(notFoundHandler);
  mountHealthRoutes(app, {
    what: 'the built-in evaluator',
    readiness: () => ({ ready: true }),
    document: false,
  });
  // The controller's reachability check of an Evaluator is a GET: any answer means "it answers".
  app.get('/evaluate', () => {
    throw httpError('method_not_allowed', 'POST an evaluation to /evaluate', undefined, {
      headers: { allow: 'POST' },
    });
  });
  app.post('/evaluate', async (c) => {
    if (mediaTypeOf(c) !== 'application/json')
      throw httpError('unsupported_media_type', 'the body must be application/json');
    const parsed = evaluateBody.safeParse(parseJsonBody(c, await c.req.text()));
    if (!parsed.success) throw validationError(parsed.error.issues);
    try {
      const v = await score(parsed.data, o.judge, c.req.raw.signal);
      return c.json({ score: v.score, passed: v.passed, reasoning: v.reasoning, metrics: v.metrics ?? {} });
    } catch (err) {
      if (err instanceof BadParameters) throw httpError('invalid_request', err.message);
      if (err instanceof JudgeFailed) throw httpError('model_error', err.message);
      throw err;
    }
  });
  return app;
}

export interface RunningEvaluator {
  /** The Evaluator's `spec.address.value`, e.g. http://127.0.0.1:9100. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the built-in evaluator on loopback (`port` 0: any free port). */
export async function startBuiltinEvaluator(
  opts: EvaluatorAppOptions & { port: number },
): Promise<RunningEvaluator> {
  const app = evaluatorApp(opts);
  const l = await listenHttp(app.fetch, { port: opts.port });
  opts.logger.info({ port: l.port }, 'built-in evaluator listening');
  return { url: l.url, port: l.port, close: l.close };
}

/**
 * The built-in evaluator with its judge: Models of `namespace` read through `lookup`, called by the
 * engine's model clients over an HTTP client of its own (closed with the server).
 */
export async function startBuiltinEvaluatorFor(opts: {
  port: number;
  logger: Logger;
  lookup: ResourceLookup;
  namespace: string;
}): Promise<RunningEvaluator> {
  const http = createHttpClient();
  const models = new ModelClients(http, opts.lookup, 2);
  const judge = createModelJudge({ lookup: opts.lookup, models, namespace: opts.namespace });
  try {
    const running = await startBuiltinEvaluator({ port: opts.port, logger: opts.logger, judge });
    return {
      ...running,
      close: async () => {
        await running.close();
        await http.close();
      },
    };
  } catch (err) {
    await http.close();
    throw err;
  }
}

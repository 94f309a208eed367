import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errorHandler, HttpError } from '../../http/index.ts';
import { KubeError } from '../../kube/errors.ts';
import { createLogger } from '../../log/index.ts';
import { CompatError, kubeErrorToCompat, renderOpenAIError } from './errors.ts';

/** The /compat/v1 sub-app's error handling, as compat/index.ts wires it. */
function compatThrowing(err: () => Error) {
  const app = new Hono();
  app.onError(
    errorHandler(createLogger({ level: 'silent' }), {
      mappers: [kubeErrorToCompat],
      render: renderOpenAIError,
    }),
  );
  app.post('/', async (c) => {
    await c.req.json();
    throw err();
  });
  return app;
}

async function answer(err: () => Error, body = '{}') {
  const res = await compatThrowing(err).request('/', { method: 'POST', body });
  return { status: res.status, retry: res.headers.get('x-should-retry'), body: await res.json() };
}

describe('/compat/v1 errors in the OpenAI shape', () => {
  it('a CompatError keeps its type and param; a 4xx is never retried', async () => {
    const r = await answer(
      () => new CompatError('model_not_found', "The model 'agent/x' does not exist", { param: 'model' }),
    );
    expect(r).toEqual({
      status: 404,
      retry: 'false',
      body: {
        error: {
          message: "The model 'agent/x' does not exist",
          type: 'not_found_error',
          param: 'model',
          code: 'model_not_found',
        },
      },
    });
  });

  it('a CompatError takes its status from its code, and its type from the status unless given', () => {
    expect(new CompatError('stream_broken', 'broke')).toMatchObject({ status: 502, type: 'server_error' });
    expect(new CompatError('timeout', 'late')).toMatchObject({ status: 504, type: 'timeout_error' });
    expect(new CompatError('kubernetes_unavailable', 'down', { status: 502 }).status).toBe(502);
    // @ts-expect-error: model_not_found is a 404 only
    expect(new CompatError('model_not_found', 'x', { status: 400 }).status).toBe(400);
  });

  it('malformed JSON is a 400 invalid_request_error with code invalid_json', async () => {
    const r = await answer(() => new Error('unreached'), '{"model": ');
    expect(r.status).toBe(400);
    expect(r.retry).toBe('false');
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json', param: null });
  });

  it('a plain HttpError gets the type of its status', async () => {
    const r = await answer(() => new HttpError('unauthorized', 'no key'));
    expect(r.body.error).toMatchObject({ type: 'authentication_error', code: 'unauthorized' });
  });

  it('an Invalid Query is the request’s 400; other Kubernetes failures a retryable 502', async () => {
    const invalid = await answer(() => new KubeError(422, 'Invalid', 'create Query: spec.input'));
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatchObject({ type: 'invalid_request_error', code: 'query_create_failed' });
    const refused = await answer(() => new KubeError(403, 'Forbidden', 'create Query: forbidden'));
    expect(refused.status).toBe(502);
    expect(refused.retry).toBeNull();
    expect(refused.body.error).toMatchObject({ type: 'server_error', code: 'kubernetes_error' });
    const down = await answer(() => new KubeError(503, 'Unavailable', 'list Agent: connect ECONNREFUSED'));
    expect(down.body.error).toMatchObject({ type: 'server_error', code: 'kubernetes_unavailable' });
  });

  it('a query that ran and failed is not retried; an unknown error is a retryable 500', async () => {
    const failed = await answer(() => new CompatError('query_failed', 'model down', { retryable: false }));
    expect(failed.retry).toBe('false');
    const bug = await answer(() => new TypeError('x is undefined'));
    expect(bug.status).toBe(500);
    expect(bug.retry).toBeNull();
    expect(bug.body.error).toMatchObject({ type: 'server_error', code: 'internal' });
  });
});

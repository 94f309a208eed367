import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { HttpError, requestId } from '../http/index.ts';
import { KubeError } from '../kube/errors.ts';
import { createLogger } from '../log/index.ts';
import { gatewayErrorHandler, kubeErrorToHttp } from './kube-error-mapper.ts';

/** A route that throws what it is given, behind the API service's error handling. */
function appThrowing(err: Error) {
  const app = new Hono();
  app.use('*', requestId());
  app.onError(gatewayErrorHandler(createLogger({ level: 'silent' })));
  app.get('/', () => {
    throw err;
  });
  return app;
}

async function answer(err: Error) {
  const res = await appThrowing(err).request('/', { headers: { 'x-request-id': 'k-1' } });
  return { status: res.status, error: (await res.json()).error };
}

describe('KubeError → HTTP, in the gateway error handler', () => {
  it('a conflict thrown by a handler is 409 `conflict` in the envelope', async () => {
    const { status, error } = await answer(
      new KubeError(409, 'Conflict', 'replace Agent: the object has been modified'),
    );
    expect(status).toBe(409);
    expect(error).toEqual({
      code: 'conflict',
      message: 'replace Agent: the object has been modified',
      requestId: 'k-1',
    });
  });

  it.each([
    [404, 'NotFound', 'not_found'],
    [409, 'AlreadyExists', 'already_exists'],
    [403, 'Forbidden', 'forbidden'],
    [401, 'Unauthorized', 'unauthorized'],
    [400, 'BadRequest', 'bad_request'],
    [410, 'Gone', 'gone'],
    [429, 'TooManyRequests', 'rate_limited'],
    [504, 'Timeout', 'timeout'],
    [503, 'Unavailable', 'kubernetes_unavailable'],
    [500, 'Unknown', 'kubernetes_error'],
  ] as const)('%i %s is %i `%s`', async (code, reason, expected) => {
    const { status, error } = await answer(new KubeError(code, reason, 'x'));
    expect(status).toBe(code);
    expect(error.code).toBe(expected);
  });

  it("an Invalid object is 422 `invalid` with the API server's field causes", async () => {
    const err = KubeError.fromResponse(
      422,
      JSON.stringify({
        kind: 'Status',
        reason: 'Invalid',
        code: 422,
        message: 'Agent.berth.dev "a" is invalid',
        details: { causes: [{ field: 'spec.prompt', reason: 'FieldValueRequired', message: 'Required' }] },
      }),
      'create Agent',
    );
    const { status, error } = await answer(err);
    expect(status).toBe(422);
    expect(error.code).toBe('invalid');
    expect(error.details).toEqual({
      causes: [{ field: 'spec.prompt', reason: 'FieldValueRequired', message: 'Required' }],
    });
  });

  it('a status outside 4xx/5xx (a failure without an HTTP answer) is 502', async () => {
    expect((await answer(new KubeError(0, 'Unknown', 'socket hang up'))).status).toBe(502);
  });

  it('leaves other errors to the rest of the handler', async () => {
    expect(kubeErrorToHttp(new Error('boom'))).toBeUndefined();
    expect((await answer(new HttpError('not_found', 'Agent ns/a not found'))).error.code).toBe('not_found');
    expect(await answer(new Error('boom'))).toMatchObject({ status: 500, error: { code: 'internal' } });
  });
});

describe('a resourceVersion the API server cannot parse', () => {
  it('is the caller’s fault: 400 `invalid_resource_version`, not the API server’s 500', async () => {
    const { status, error } = await answer(
      new KubeError(500, 'Unknown', 'replace /apis/x: strconv.ParseUint: parsing "abc": invalid syntax'),
    );
    expect(status).toBe(400);
    expect(error.code).toBe('invalid_resource_version');
    expect(error.message).toContain('metadata.resourceVersion');
  });

  it('nor is one given on a create', async () => {
    const { status, error } = await answer(
      new KubeError(
        500,
        'Unknown',
        'create /api/v1/x: resourceVersion should not be set on objects to be created',
      ),
    );
    expect(status).toBe(400);
    expect(error.code).toBe('invalid_resource_version');
  });

  it('leaves other 500s of the API server as they are', async () => {
    expect((await answer(new KubeError(500, 'Unknown', 'etcdserver: request timed out'))).status).toBe(500);
  });
});

describe('the API server out of reach', () => {
  it('is a 503 kubernetes_unavailable with Retry-After', async () => {
    const res = await appThrowing(new KubeError(503, 'Unavailable', 'list: connect ECONNREFUSED')).request(
      '/',
    );
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect((await res.json()).error.code).toBe('kubernetes_unavailable');
  });
});

describe('an object over the size etcd stores', () => {
  // What the API server answers when a write would store more than etcd's request limit.
  const etcdRefusal = JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: 'etcdserver: request is too large',
    code: 500,
  });

  it('is 413 `object_too_large` saying why, not the API server’s 500', async () => {
    const err = KubeError.fromResponse(
      500,
      etcdRefusal,
      'patch /apis/berth.dev/v1alpha1/namespaces/n/agents/a',
    );
    expect(err).toMatchObject({ code: 413, reason: 'TooLarge' });
    // The Status passed through by the generic API says the same.
    expect(err.status).toMatchObject({ code: 413, reason: 'RequestEntityTooLarge' });
    const { status, error } = await answer(err);
    expect(status).toBe(413);
    expect(error.code).toBe('object_too_large');
    expect(error.message).toContain('1.5 MiB');
  });

  it('also past 2 MiB, where the API server’s gRPC client refuses to send it to etcd', async () => {
    const body = JSON.stringify({
      kind: 'Status',
      message:
        'rpc error: code = ResourceExhausted desc = trying to send message larger than max (2097515 vs. 2097152)',
      code: 500,
    });
    expect((await answer(KubeError.fromResponse(500, body, 'create /apis/x'))).status).toBe(413);
  });

  it('as is the API server’s own 413 for a body over its limit', async () => {
    const body = JSON.stringify({
      kind: 'Status',
      message: 'Request entity too large: limit is 3145728',
      code: 413,
    });
    const { status, error } = await answer(KubeError.fromResponse(413, body, 'create /api/v1/x'));
    expect(status).toBe(413);
    expect(error.code).toBe('object_too_large');
  });
});

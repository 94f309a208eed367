/**
 * Issue 26 item 10: PATCH of a resource answered 500 now and then under generated requests. A merge
 * PATCH adds to what is stored, so a PATCH fails once the object it makes would be over what etcd
 * stores (about 1.5 MiB): the API server reports that as a 500 InternalError, and every later PATCH
 * that adds to the object fails the same way until it shrinks — how often depends on what earlier
 * requests stored, which is why one run saw it and the next did not. It is the writer's doing: 413
 * `object_too_large`. Also: writes racing on one name (PATCH, PUT, DELETE, create) are answered
 * 2xx/4xx, never 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureErrors } from '../fuzz/capture.ts';
import { startService, type TestService } from '../gateway/support.ts';
import { createNamespace } from '../support/kube.ts';

const errors = captureErrors();
let ns: string;
let svc: TestService;
beforeAll(async () => {
  ns = await createNamespace('sec-patch');
  // The body limit `berth api` has by default: large enough for a body the API server cannot store.
  svc = await startService({ namespace: ns, logger: errors.logger, bodyLimitBytes: 10 * 1024 * 1024 });
}, 120_000);
afterAll(async () => svc?.close());

interface Answer {
  status: number;
  body: any;
}
async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${svc.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const KB = 1024;
const filler = (n: number) => 'x'.repeat(n);

describe('an object grown by merge patches past what the API server stores', () => {
  it('is a 413 object_too_large for the PATCH that would grow it, and the object stays usable', async () => {
    const agents = `/v1/namespaces/${ns}/agents`;
    expect((await call('POST', agents, { name: 'grown', spec: { prompt: 'p' } })).status).toBe(201);
    // Each body is well under every limit; together they are not.
    const first = await call('PATCH', `${agents}/grown`, { spec: { prompt: filler(900 * KB) } });
    expect(first.status).toBe(200);
    const second = await call('PATCH', `${agents}/grown`, { spec: { description: filler(900 * KB) } });
    expect(second.status, JSON.stringify(second.body).slice(0, 300)).toBe(413);
    expect(second.body.error.code).toBe('object_too_large');
    expect(second.body.error.message).toMatch(/larger than the API server stores/);
    // Nothing of the refused PATCH was stored; a PATCH that shrinks it still goes through.
    const shrunk = await call('PATCH', `${agents}/grown`, { spec: { prompt: 'short' } });
    expect(shrunk.status).toBe(200);
    expect(shrunk.body.spec).toEqual({ prompt: 'short' });
  });

  it('is the same 413 for a create or a replace the API server cannot store', async () => {
    const agents = `/v1/namespaces/${ns}/agents`;
    const big = { prompt: filler(2048 * KB) };
    const created = await call('POST', agents, { name: 'too-big', spec: big });
    expect(created.status, JSON.stringify(created.body).slice(0, 400)).toBe(413);
    expect(created.body.error.code).toBe('object_too_large');
    expect((await call('POST', agents, { name: 'small', spec: { prompt: 'p' } })).status).toBe(201);
    const replaced = await call('PUT', `${agents}/small`, { spec: big });
    expect(replaced.status).toBe(413);
  });

  it('concurrent PATCHes that together exceed it: each 200 or 413, never a 5xx', async () => {
    const agents = `/v1/namespaces/${ns}/agents`;
    expect((await call('POST', agents, { name: 'racing', spec: { prompt: 'p' } })).status).toBe(201);
    const answers = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        call('PATCH', `${agents}/racing`, {
          metadata: { annotations: { [`fuzz/${i}`]: 'x' } },
          spec: { [i % 2 ? 'description' : 'prompt']: filler(800 * KB + i) },
        }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.every((s) => s === 200 || s === 413),
      statuses.join(','),
    ).toBe(true);
  });
});

const SPECS: Record<string, unknown> = {
  agents: { prompt: 'p' },
  teams: { members: [{ type: 'agent', name: 'a' }], strategy: 'sequential' },
  queries: { input: 'hi', target: { type: 'agent', name: 'a' } },
  evaluators: { address: { value: 'https://evaluator.example/x' } },
};

describe('writes racing on one name', () => {
  it('PATCH, PUT, DELETE and create of the same objects at once: never a 5xx, nothing logged as an error', async () => {
    const rounds = 12;
    const fives: string[] = [];
    for (let r = 0; r < rounds; r++) {
      const jobs: Array<Promise<Answer & { what: string }>> = [];
      const send = (what: string, method: string, path: string, body?: unknown) =>
        jobs.push(call(method, path, body).then((a) => ({ ...a, what })));
      for (const [plural, spec] of Object.entries(SPECS)) {
        const base = `/v1/namespaces/${ns}/${plural}`;
        const name = `race-${r % 2}`;
        send(`POST ${plural}`, 'POST', base, { name, spec });
        for (let i = 0; i < 6; i++) {
          // A conditional write with a version that cannot match, an empty one, and plain merges.
          const rv = ['1', '', undefined][i % 3];
          send(`PATCH ${plural} rv=${rv}`, 'PATCH', `${base}/${name}`, {
            metadata: { labels: { i: String(i) }, ...(rv === undefined ? {} : { resourceVersion: rv }) },
          });
        }
        send(`PUT ${plural}`, 'PUT', `${base}/${name}`, { spec });
        if (r % 2) send(`DELETE ${plural}`, 'DELETE', `${base}/${name}`);
      }
      for (const a of await Promise.all(jobs))
        if (a.status >= 500) fives.push(`${a.what} → ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`);
    }
    expect(fives).toEqual([]);
    expect(errors.lines()).toEqual([]);
  }, 120_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, kubectl } from '../support/kube.ts';
import { eventually } from '../support/wait.ts';
import { type Client, client, startService, type TestService } from './support.ts';

let svc: TestService;
let api: Client;
let ns: string;

beforeAll(async () => {
  ns = await createNamespace('gw-res');
  svc = await startService({ namespace: ns });
  api = client(svc.url);
});
afterAll(() => svc?.close());

const names = (list: { items: Array<{ metadata: { name: string } }> }) =>
  list.items.map((i) => i.metadata.name);

const kinds = [
  {
    plural: 'agents',
    spec: { prompt: 'be brief', modelRef: { name: 'default' } },
    replaced: { prompt: 'be thorough' },
    patch: { description: 'patched' },
  },
  {
    plural: 'teams',
    spec: { strategy: 'sequential', members: [{ type: 'agent', name: 'a' }] },
    replaced: { strategy: 'round-robin', members: [{ type: 'agent', name: 'b' }], maxTurns: 3 },
    patch: { description: 'patched' },
  },
  {
    plural: 'queries',
    spec: { input: 'hello', target: { type: 'agent', name: 'a' } },
    replaced: { input: 'bye', target: { type: 'team', name: 't' } },
    patch: { sessionId: 's-1' },
  },
  {
    plural: 'models',
    spec: { type: 'openai', model: 'gpt-4o-mini', baseUrl: 'https://api.example.com/v1' },
    replaced: { type: 'azure', model: 'gpt-4o', baseUrl: 'https://azure.example.com/v1' },
    patch: { model: 'gpt-4.1' },
  },
  {
    plural: 'evaluators',
    spec: { address: { value: 'https://judge.example.com' } },
    replaced: { address: { value: 'https://judge2.example.com' }, description: 'v2' },
    patch: { description: 'patched' },
  },
];

describe.each(kinds)('$plural', ({ plural, spec, replaced, patch }) => {
  const base = () => `/v1/namespaces/${ns}/${plural}`;

  it('create, then get and list see it at once; put, patch, delete likewise', async () => {
    const created = await api.post(base(), { name: 'one', spec });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ metadata: { name: 'one', namespace: ns }, spec });
    expect(created.body.metadata.managedFields).toBeUndefined();
    // Kubernetes-style metadata works too.
    const two = await api.post(base(), { metadata: { name: 'two', labels: { tier: 'x' } }, spec });
    expect(two.status, two.text).toBe(201);

    const got = await api.get(`${base()}/one`);
    expect(got.status).toBe(200);
    expect(got.body.spec).toMatchObject(spec);
    const list = await api.get(base());
    expect(list.status).toBe(200);
    expect(names(list.body)).toEqual(['one', 'two']);
    expect(list.body.count).toBe(2);

    const put = await api.put(`${base()}/one`, { spec: replaced });
    expect(put.status, put.text).toBe(200);
    expect((await api.get(`${base()}/one`)).body.spec).toMatchObject(replaced);
    expect((await api.get(base())).body.items[0].spec).toMatchObject(replaced);

    const patched = await api.patch(`${base()}/one`, { spec: patch, metadata: { labels: { p: 'y' } } });
    expect(patched.status, patched.text).toBe(200);
    const afterPatch = (await api.get(`${base()}/one`)).body;
    expect(afterPatch.spec).toMatchObject({ ...replaced, ...patch });
    expect(afterPatch.metadata.labels).toEqual({ p: 'y' });

    const del = await api.del(`${base()}/one`);
    expect(del.status, del.text).toBe(200);
    if (plural === 'queries') {
      // Created with the controller's cleanup finalizer (no controller here): a DELETE marks it
      // terminating; it is gone once the finalizer is released, as the controller does after the purge.
      expect(created.body.metadata.finalizers).toEqual(['berth.dev/query-cleanup']);
      expect((await api.get(`${base()}/one`)).body.metadata.deletionTimestamp).toBeTruthy();
      await api.patch(`${base()}/one`, { metadata: { finalizers: null } });
      await eventually(async () => (await api.get(`${base()}/one`)).status === 404);
    } else expect(created.body.metadata.finalizers).toBeUndefined();
    expect((await api.get(`${base()}/one`)).status).toBe(404);
    expect(names((await api.get(base())).body)).toEqual(['two']);
  });

  it('maps Kubernetes failures: 409 exists, 404 missing, 400 body, 422 with causes', async () => {
    const dup = await api.post(base(), { name: 'two', spec });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'already_exists' });
    expect(dup.body.error.message).toContain('two');

    for (const [method, path, body] of [
      ['GET', `${base()}/missing`, undefined],
      ['PUT', `${base()}/missing`, { spec }],
      ['PATCH', `${base()}/missing`, { spec: patch }],
      ['DELETE', `${base()}/missing`, undefined],
    ] as const) {
      const res = await api.call(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('not_found');
      expect(res.body.error.requestId).toBe(res.headers.get('x-request-id'));
    }

    const noSpec = await api.post(base(), { name: 'x' });
    expect(noSpec.status).toBe(400);
    expect(noSpec.body.error.details.issues.map((i: { path: string }) => i.path)).toContain('spec');
    const noName = await api.post(base(), { spec });
    expect(noName.status).toBe(400);
    expect(noName.body.error.message).toContain('name');

    // Names are not checked by us on create: the API server's verdict comes back with its causes.
    const badName = await api.post(base(), { name: 'Not_A_Name', spec });
    expect(badName.status).toBe(422);
    expect(badName.body.error.code).toBe('invalid');
    expect(badName.body.error.details.causes).toContainEqual(
      expect.objectContaining({ field: 'metadata.name' }),
    );
    const badLabel = await api.patch(`${base()}/two`, { metadata: { labels: { 'bad key!': 'v' } } });
    expect(badLabel.status).toBe(422);
    expect(badLabel.body.error.details.causes[0].field).toContain('metadata.labels');
  });
});

describe('conflicts and schema validation by the API server', () => {
  it('PUT with a stale resourceVersion is 409 conflict', async () => {
    const base = `/v1/namespaces/${ns}/agents`;
    const created = await api.post(base, { name: 'cas', spec: { prompt: 'v1' } });
    const rv = created.body.metadata.resourceVersion;
    expect((await api.put(`${base}/cas`, { spec: { prompt: 'v2' } })).status).toBe(200);
    const stale = await api.put(`${base}/cas`, { metadata: { resourceVersion: rv }, spec: { prompt: 'v3' } });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('conflict');
    expect((await api.get(`${base}/cas`)).body.spec.prompt).toBe('v2');
  });

  it('a merge patch that breaks the CRD schema is 422 naming the field', async () => {
    const base = `/v1/namespaces/${ns}/teams`;
    const created = await api.post(base, {
      name: 'schema',
      spec: { strategy: 'sequential', members: [{ type: 'agent', name: 'a' }] },
    });
    expect(created.status, created.text).toBe(201);
    const res = await api.patch(`${base}/schema`, { spec: { strategy: 'bogus' } });
    expect(res.status).toBe(422);
    expect(res.body.error.details.causes).toContainEqual(expect.objectContaining({ field: 'spec.strategy' }));
  });
});

describe('evaluations', () => {
  const base = () => `/v1/namespaces/${ns}/evaluations`;
  it("creates from the spec's flat body, cancels, and supports put/patch/delete", async () => {
    const body = {
      name: 'capital',
      type: 'direct',
      evaluator: { name: 'judge' },
      config: { input: 'Capital of France?', output: 'Paris' },
    };
    const created = await api.post(base(), body);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'Evaluation',
      metadata: { name: 'capital', namespace: ns },
      spec: { type: 'direct', evaluator: { name: 'judge' }, config: body.config },
    });
    expect((await api.get(base())).body.items.map((i: any) => i.metadata.name)).toContain('capital');

    const cancel = await api.patch(`${base()}/capital/cancel`, undefined);
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.body.spec.cancel).toBe(true);
    expect((await api.get(`${base()}/capital`)).body.spec.cancel).toBe(true);
    expect((await api.patch(`${base()}/nope/cancel`, undefined)).status).toBe(404);

    const put = await api.put(`${base()}/capital`, {
      spec: { type: 'direct', evaluator: { name: 'judge2' }, config: { input: 'a', output: 'b' } },
    });
    expect(put.status, put.text).toBe(200);
    expect((await api.get(`${base()}/capital`)).body.spec.evaluator.name).toBe('judge2');
    const patched = await api.patch(`${base()}/capital`, { spec: { config: { output: 'c' } } });
    expect(patched.body.spec.config).toEqual({ input: 'a', output: 'c' });
    expect((await api.del(`${base()}/capital`)).status).toBe(200);
    expect((await api.get(`${base()}/capital`)).status).toBe(404);
  });

  it('rejects create bodies that do not follow the spec with 400 listing the fields', async () => {
    const res = await api.post(base(), { name: 'x', type: 'indirect', config: { input: 1 } });
    expect(res.status).toBe(400);
    const paths = res.body.error.details.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['type', 'evaluator', 'config.input', 'config.output']));
  });
});

describe('namespaces and context', () => {
  it('GET /v1/namespaces lists the cluster namespaces', async () => {
    const res = await api.get('/v1/namespaces');
    expect(res.status).toBe(200);
    const entry = res.body.items.find((n: { name: string }) => n.name === ns);
    expect(entry).toMatchObject({ name: ns, phase: 'Active' });
    expect(res.body.count).toBe(res.body.items.length);
  });

  it("POST /v1/namespaces validates and maps the API server's 403", async () => {
    expect((await api.post('/v1/namespaces', { name: 'Bad_Name' })).status).toBe(400);
    // The gateway identity may not create namespaces (hack/local-rbac.yaml).
    const res = await api.post('/v1/namespaces', { name: `${ns}-new` });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
  });

  it('GET /v1/context says where the instance points', async () => {
    const own = await api.get('/v1/context');
    expect(own.body).toMatchObject({ namespace: ns, instanceNamespace: ns, broker: false, version: '0.1.0' });
    expect(own.body.cluster).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect((await api.get('/v1/context?namespace=other')).body.namespace).toBe('other');
  });

  it('reads a namespace outside the cache from the API server', async () => {
    const other = await createNamespace('gw-res-other');
    const applied = await kubectl(
      ['apply', '-n', other, '-f', '-'],
      'apiVersion: berth.dev/v1alpha1\nkind: Agent\nmetadata: {name: elsewhere}\nspec: {prompt: hi}\n',
    );
    expect(applied.code, applied.stderr).toBe(0);
    expect(names((await api.get(`/v1/namespaces/${other}/agents`)).body)).toEqual(['elsewhere']);
    expect((await api.get(`/v1/namespaces/${other}/agents/elsewhere`)).body.spec.prompt).toBe('hi');
    expect((await api.get(`/v1/namespaces/${other}/agents/nope`)).status).toBe(404);
  });
});

describe('list responses', () => {
  it('are gzip-encoded when accepted, carry an ETag, answer 304 until the list changes', async () => {
    const base = `/v1/namespaces/${ns}/evaluators`;
    const raw = await fetch(`${svc.url}${base}`, { headers: { 'accept-encoding': 'identity' } });
    expect(raw.headers.get('content-encoding')).toBeNull();
    const plain = await raw.text();
    const zipped = await fetch(`${svc.url}${base}`, { headers: { 'accept-encoding': 'br, gzip;q=0.8' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('vary')).toBe('accept-encoding');
    expect(await zipped.text()).toBe(plain); // fetch decodes gzip
    const noGzip = await fetch(`${svc.url}${base}`, { headers: { 'accept-encoding': 'gzip;q=0' } });
    expect(noGzip.headers.get('content-encoding')).toBeNull();
    await noGzip.body?.cancel();

    const etag = raw.headers.get('etag') ?? '';
    expect(etag).toMatch(/^".+"$/);
    const same = await fetch(`${svc.url}${base}`, { headers: { 'if-none-match': etag } });
    expect(same.status).toBe(304);
    expect(
      await api.post(base, { name: 'etag', spec: { address: { value: 'https://e.example' } } }),
    ).toMatchObject({
      status: 201,
    });
    const changed = await fetch(`${svc.url}${base}`, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect((await changed.json()).items.map((i: any) => i.metadata.name)).toContain('etag');
  });
});

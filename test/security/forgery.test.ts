/**
 * The request-forgery matrix of the addresses written in custom resources (issue 18 item 3):
 * Models, Memories, Tools and Evaluators are all called through the engine's one HTTP client
 * (pkg/engine/http.ts), whose every connection passes the cluster address rule
 * (pkg/http/outbound). In-cluster services live on loopback and private addresses, so those are
 * allowed by design; link-local (cloud metadata) and the other addresses no service lives on are
 * refused — as literals, through DNS, and as redirect targets. Model base URLs must also be https
 * (or http to a `*.svc.cluster.local` Service). The marketplace's stricter guard (public addresses
 * only) has its own matrix in test/gateway/marketplace-items.test.ts.
 */
import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, type HttpClient, modelUrlProblem } from '../../pkg/engine/http.ts';
import { refusalIn, systemResolver } from '../../pkg/http/outbound/index.ts';
import { client, startService, type TestService } from '../gateway/support.ts';
import { createNamespace } from '../support/kube.ts';

// Names a hostile resource could use: each resolves somewhere it must not reach.
const DNS: Record<string, LookupAddress[]> = {
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
  'metadata6.test': [{ address: 'fd00:ec2::254', family: 6 }],
  'mixed.test': [
    { address: '127.0.0.1', family: 4 },
    { address: '169.254.169.254', family: 4 },
  ],
  'loopback.test': [{ address: '127.0.0.1', family: 4 }],
};

let server: Server;
let base: string;
let http: HttpClient;
const seen: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? '');
    const m = /^\/redirect-to\/(.+)$/.exec(req.url ?? '');
    if (m) {
      res.writeHead(302, { location: decodeURIComponent(m[1] as string) }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  http = createHttpClient({ resolve: async (h) => DNS[h] ?? systemResolver(h) });
});
afterAll(async () => {
  await http?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => server?.close(() => r()));
});

const refusal = async (url: string) => {
  const err = await http.fetch(url).then(
    () => undefined,
    (e: unknown) => e,
  );
  return refusalIn(err)?.message;
};

describe('the engine HTTP client (Models, Memories, Tools, Evaluators)', () => {
  it.each([
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['link-local', 'http://169.254.10.10/'],
    ['IPv6 link-local', 'http://[fe80::1]/'],
    ['IPv4-mapped metadata', 'http://[::ffff:169.254.169.254]/'],
    ['AWS IPv6 metadata', 'http://[fd00:ec2::254]/'],
    ['Alibaba metadata', 'http://100.100.100.200/'],
    ['unspecified', 'http://0.0.0.0:8080/'],
    ['multicast', 'http://224.0.0.1/'],
    ['a name resolving to metadata', 'http://metadata.test/latest/'],
    ['a name resolving to IPv6 metadata', 'https://metadata6.test/'],
    ['a name with one metadata address among others', 'http://mixed.test/'],
  ])('refuses %s before connecting', async (_what, url) => {
    expect(await refusal(url)).toMatch(/not allowed/);
  });

  it('refuses a redirect to metadata: every hop meets the rule', async () => {
    const before = seen.length;
    const why = await refusal(`${base}/redirect-to/${encodeURIComponent('http://169.254.169.254/latest/')}`);
    expect(why).toMatch(/169\.254\.169\.254.*not allowed/);
    expect(seen.slice(before)).toEqual([
      `/redirect-to/${encodeURIComponent('http://169.254.169.254/latest/')}`,
    ]);
  });

  it('allows loopback and names resolving to it by design (in-cluster services, `berth up`)', async () => {
    const port = new URL(base).port;
    for (const url of [
      `${base}/x`,
      `http://loopback.test:${port}/y`,
      `${base}/redirect-to/${encodeURIComponent(`${base}/z`)}`,
    ]) {
      const res = await http.fetch(url);
      expect(res.status, url).toBe(200);
      await res.text();
    }
  });

  it('applies the rule to the event poster (postJson) too', async () => {
    const err = await http.postJson('http://169.254.169.254/events', '{}').catch((e: unknown) => e);
    expect(refusalIn(err)?.message).toMatch(/not allowed/);
    expect(await http.postJson(`${base}/events`, '{}')).toBe(200);
  });
});

describe('Model base URLs (the spec: https, or http to an in-cluster Service)', () => {
  it('are judged by the engine before any call', () => {
    expect(modelUrlProblem('https://api.openai.com/v1')).toBeUndefined();
    expect(modelUrlProblem('http://vllm.models.svc.cluster.local:8000/v1')).toBeUndefined();
    for (const bad of ['http://127.0.0.1:8000/v1', 'http://169.254.169.254/', 'file:///etc/passwd', 'nope'])
      expect(modelUrlProblem(bad), bad).toBeDefined();
  });

  let ns: string;
  let svc: TestService;
  beforeAll(async () => {
    ns = await createNamespace('sec-forgery');
    svc = await startService({ namespace: ns });
  });
  afterAll(() => svc?.close());

  it('are refused on write by the API service and the API server alike', async () => {
    const api = client(svc.url);
    const model = (name: string, baseUrl: string) => ({
      name,
      spec: { type: 'openai', model: 'm', baseUrl },
    });
    for (const [i, bad] of ['http://127.0.0.1:8000/v1', 'http://169.254.169.254/', 'ftp://x/v1'].entries()) {
      const res = await api.post(`/v1/namespaces/${ns}/models`, model(`bad-${i}`, bad));
      expect([400, 422], `${bad} → ${res.status} ${res.text}`).toContain(res.status);
    }
    for (const [i, good] of [
      'https://api.example.com/v1',
      'http://llm.ai.svc.cluster.local:8000/v1',
    ].entries())
      expect((await api.post(`/v1/namespaces/${ns}/models`, model(`good-${i}`, good))).status).toBe(201);
  });
});

/**
 * An Evaluator is ready only when its address answers: a real HTTP server that answers (any status),
 * a port that refuses, one that never answers, and the rechecks that notice a change.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthScheme, type Evaluator, Kinds } from '../api/index.ts';
import { createHttpClient } from '../engine/http.ts';
import { FakeClient } from '../kube/client/index.ts';
import { createLogger } from '../log/index.ts';
import { EvaluatorReconciler, probeEvaluator } from './evaluator.ts';

const http = createHttpClient();
const ctx = () => ({ signal: new AbortController().signal, logger: createLogger({ level: 'silent' }) });
let answering: Server;
let silent: Server;
let url: string;
let silentUrl: string;
let refusedUrl: string;

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  answering = createServer((_req, res) => res.writeHead(404).end('nothing here'));
  silent = createServer(() => {}); // accepts, never answers
  url = await listen(answering);
  silentUrl = await listen(silent);
  const closed = createServer();
  refusedUrl = await listen(closed);
  await new Promise<void>((r) => closed.close(() => r()));
});
afterAll(async () => {
  answering.closeAllConnections();
  silent.closeAllConnections();
  answering.close();
  silent.close();
  await http.close();
});

const evaluator = (address: string): Evaluator =>
  ({
    apiVersion: 'berth.dev/v1alpha1',
    kind: 'Evaluator',
    metadata: { name: 'judge', namespace: 'ns', generation: 1 },
    spec: { address: { value: address } },
  }) as Evaluator;

describe('probeEvaluator', () => {
  it('is ready when anything answers, even a 404', async () => {
    expect(await probeEvaluator(http.fetch, `${url}/api`, 1000)).toMatchObject({
      phase: 'ready',
      address: `${url}/api`,
      message: `address ${url}/api answers`,
    });
  });

  it('is Unreachable when the port refuses or nothing answers in time', async () => {
    const refused = await probeEvaluator(http.fetch, refusedUrl, 1000);
    expect(refused).toMatchObject({ phase: 'error', reason: 'Unreachable', address: refusedUrl });
    expect(refused.message).toMatch(/does not answer: .*refused/i);
    const quiet = await probeEvaluator(http.fetch, silentUrl, 200);
    expect(quiet).toMatchObject({ phase: 'error', reason: 'Unreachable' });
    expect(quiet.message).toContain('no answer within 200 ms');
  });
});

describe('EvaluatorReconciler', () => {
  it('writes error while the address refuses and rechecks soon; ready once it answers, rechecked rarely', async () => {
    const client = new FakeClient({ scheme: berthScheme() });
    client.seed(Kinds.Evaluator, evaluator(refusedUrl));
    const r = new EvaluatorReconciler({
      client,
      fetch: http.fetch,
      recheckUnreachableMs: 111,
      recheckReadyMs: 999,
    });
    const req = { namespace: 'ns', name: 'judge' };
    expect(await r.reconcile(req, ctx())).toEqual({ requeueAfterMs: 111 });
    let got = await client.get(Kinds.Evaluator, req);
    expect(got.status).toMatchObject({ phase: 'error', lastResolvedAddress: refusedUrl });
    expect(got.status?.conditions?.[0]).toMatchObject({
      type: 'Ready',
      status: 'False',
      reason: 'Unreachable',
    });

    await client.patch(Kinds.Evaluator, req, { type: 'merge', patch: { spec: { address: { value: url } } } });
    expect(await r.reconcile(req, ctx())).toEqual({ requeueAfterMs: 999 });
    got = await client.get(Kinds.Evaluator, req);
    expect(got.status).toMatchObject({ phase: 'ready', lastResolvedAddress: url });
    expect(got.status?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'True', reason: 'Resolved' });
  });

  it('does not probe an address that does not resolve (its watches bring it back)', async () => {
    const client = new FakeClient({ scheme: berthScheme() });
    client.seed(Kinds.Evaluator, evaluator('not a url'));
    const r = new EvaluatorReconciler({ client, fetch: http.fetch });
    expect(await r.reconcile({ namespace: 'ns', name: 'judge' }, ctx())).toBeUndefined();
    const got = await client.get(Kinds.Evaluator, { namespace: 'ns', name: 'judge' });
    expect(got.status?.conditions?.[0]).toMatchObject({ reason: 'InvalidAddress' });
  });
});

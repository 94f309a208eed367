/**
 * The purge's DELETE carries the Memory's headers (values from Secrets): against real servers on two
 * ports (two origins), a Memory answering with a redirect does not get its headers sent elsewhere.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, type Memory, type Query } from '../../api/index.ts';
import { FakeClient } from '../../kube/client/index.ts';
import { purgeMessages } from './purge.ts';

const seen: Array<{ at: string; url: string; headers: IncomingHttpHeaders }> = [];
const servers: http.Server[] = [];
let memoryUrl = '';
let elsewhereUrl = '';

async function listen(at: string, answer: (res: http.ServerResponse) => void): Promise<string> {
  const s = http.createServer((req, res) => {
    seen.push({ at, url: req.url ?? '', headers: req.headers });
    answer(res);
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  elsewhereUrl = await listen('elsewhere', (res) => res.writeHead(204).end());
  memoryUrl = await listen('memory', (res) =>
    res.writeHead(307, { location: `${elsewhereUrl}/stolen` }).end(),
  );
});
afterAll(() => {
  for (const s of servers) s.close();
});

describe('purgeMessages', () => {
  it('does not follow a redirect with the Memory headers: the step fails and says why', async () => {
    const client = new FakeClient();
    client.seed(Kinds.Memory, {
      metadata: { namespace: 'ns', name: 'default' },
      spec: {
        address: { value: memoryUrl },
        headers: [{ name: 'x-memory-token', value: 'configured-token' }],
      },
      status: { phase: 'ready', lastResolvedAddress: memoryUrl },
    } as Memory);
    const q = { metadata: { namespace: 'ns', name: 'q1', uid: 'u1' }, spec: {} } as Query;
    const step = await purgeMessages({ reader: client, timeoutMs: 5_000 }, q, new AbortController().signal);
    expect(step).toMatchObject({ done: false, error: 'HTTP 307 (redirects are not followed)' });
    expect(seen.map((s) => s.at)).toEqual(['memory']);
    expect(seen[0]?.headers['x-memory-token']).toBe('configured-token');
  });

  it('refuses a Memory address of cloud metadata or link-local before connecting', async () => {
    const client = new FakeClient();
    const addr = 'http://169.254.169.254';
    client.seed(Kinds.Memory, {
      metadata: { namespace: 'ns', name: 'default' },
      spec: { address: { value: addr } },
      status: { phase: 'ready', lastResolvedAddress: addr },
    } as Memory);
    const q = { metadata: { namespace: 'ns', name: 'q2', uid: 'u2' }, spec: {} } as Query;
    const step = await purgeMessages({ reader: client, timeoutMs: 5_000 }, q, new AbortController().signal);
    expect(step.done).toBe(false);
    expect(step.error).toMatch(/169\.254\.169\.254|link-local|refused/i);
  });
});

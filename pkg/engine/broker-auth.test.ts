import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerCredentials, ServiceToken } from '../http/service-token/index.ts';
import { routeHeadersFor, singleBrokerRouter } from './brokers.ts';
import { createHttpClient } from './http.ts';

// Two real servers: the broker (its URL is the configured one) and a third-party memory.
const seen: Array<{ server: string; url: string; auth: string | undefined }> = [];
const servers: http.Server[] = [];
const dir = mkdtempSync(join(tmpdir(), 'berth-engine-token-'));
let broker = '';
let other = '';

async function listen(name: string): Promise<string> {
  const s = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ server: name, url: req.url ?? '', auth: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  broker = await listen('broker');
  other = await listen('memory');
});
afterAll(async () => {
  for (const s of servers) s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('broker credentials go with a route, to its broker only', () => {
  it('the HTTP client adds no credential of its own: events, uploads and memory calls carry what the caller gives', async () => {
    const client = createHttpClient();
    seen.length = 0;
    await client.postJson(`${broker}/events`, '{}');
    await client.postJson(`${broker}/events`, '{}', { authorization: 'Bearer given' });
    const up = client.upload(`${broker}/stream/q`, 'application/x-ndjson', { authorization: 'Bearer up' });
    up.body.end('{}\n');
    await up.status;
    await client.send(`${other}/messages`, { method: 'GET', headers: {} });
    await client.close();
    expect(seen).toEqual([
      { server: 'broker', url: '/events', auth: undefined },
      { server: 'broker', url: '/events', auth: 'Bearer given' },
      { server: 'broker', url: '/stream/q', auth: 'Bearer up' },
      { server: 'memory', url: '/messages', auth: undefined },
    ]);
  });

  it("routeHeadersFor: the route's token for its broker's origin (and its Service's other names), nothing elsewhere", async () => {
    const file = join(dir, 'token');
    writeFileSync(file, 'tok-123\n');
    const creds = new BrokerCredentials(new ServiceToken(file), ['http://berth-broker'], 'team-a');
    const router = singleBrokerRouter('http://berth-broker/', 'team-a', creds);
    const route = await router.route('anything');
    expect(route?.url).toBe('http://berth-broker');
    const auth = { authorization: 'Bearer tok-123' };
    expect(routeHeadersFor(route, 'http://berth-broker/events')).toEqual(auth);
    expect(routeHeadersFor(route, 'http://berth-broker.team-a.svc.cluster.local/messages')).toEqual(auth);
    expect(routeHeadersFor(route, 'http://berth-broker.team-a.svc:80/messages')).toEqual(auth);
    // Another namespace's broker of the same name, another port, another scheme, a public host.
    expect(routeHeadersFor(route, 'http://berth-broker.team-b.svc.cluster.local/messages')).toEqual({});
    expect(routeHeadersFor(route, 'http://berth-broker:8080/messages')).toEqual({});
    expect(routeHeadersFor(route, 'https://berth-broker/messages')).toEqual({});
    expect(routeHeadersFor(route, 'http://berth-broker.example.com/messages')).toEqual({});
    expect(routeHeadersFor(undefined, 'http://berth-broker/events')).toEqual({});
  });

  it('sends no header without a token file', async () => {
    const creds = new BrokerCredentials(new ServiceToken(join(dir, 'absent')), [broker]);
    const route = await singleBrokerRouter(broker, 'ns', creds).route('ns');
    expect(route?.headers()).toEqual({});
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerCredentials, ServiceToken } from '../http/service-token/index.ts';
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

describe('the engine sends the broker token to the broker only', () => {
  it('adds Authorization to events, chunk uploads and memory calls to the broker, not elsewhere', async () => {
    const file = join(dir, 'token');
    writeFileSync(file, 'tok-123\n');
    const creds = new BrokerCredentials(new ServiceToken(file), [broker]);
    const client = createHttpClient({ brokerAuth: (u) => creds.headersFor(u) });
    seen.length = 0;
    await client.postJson(`${broker}/events`, '{}');
    const up = client.upload(`${broker}/stream/q`, 'application/x-ndjson');
    up.body.end('{}\n');
    await up.status;
    await client.send(`${broker}/messages`, { method: 'GET', headers: {} });
    await client.postJson(`${other}/events`, '{}');
    await client.send(`${other}/messages`, { method: 'GET', headers: {} });
    // A Memory's own Authorization is its own: never replaced by the broker token.
    await client.send(`${broker}/conversations`, {
      method: 'POST',
      headers: { Authorization: 'Bearer mine' },
    });
    await client.close();
    expect(seen).toEqual([
      { server: 'broker', url: '/events', auth: 'Bearer tok-123' },
      { server: 'broker', url: '/stream/q', auth: 'Bearer tok-123' },
      { server: 'broker', url: '/messages', auth: 'Bearer tok-123' },
      { server: 'memory', url: '/events', auth: undefined },
      { server: 'memory', url: '/messages', auth: undefined },
      { server: 'broker', url: '/conversations', auth: 'Bearer mine' },
    ]);
  });

  it('sends no header without a token file', async () => {
    const creds = new BrokerCredentials(new ServiceToken(join(dir, 'absent')), [broker]);
    const client = createHttpClient({ brokerAuth: (u) => creds.headersFor(u) });
    seen.length = 0;
    await client.postJson(`${broker}/events`, '{}');
    await client.close();
    expect(seen).toEqual([{ server: 'broker', url: '/events', auth: undefined }]);
  });
});

import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BrokerCredentials, brokerCredentials, ServiceToken } from './index.ts';

const dir = mkdtempSync(join(tmpdir(), 'berth-token-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ServiceToken', () => {
  it('reads the file, re-reads it after the refresh interval when it changed, and is undefined without one', () => {
    const file = join(dir, 'token');
    let now = 0;
    const t = new ServiceToken(file, { refreshMs: 60_000, now: () => now });
    expect(t.current()).toBeUndefined();
    now += 60_000;
    writeFileSync(file, 'one\n');
    expect(t.current()).toBe('one');
    writeFileSync(file, 'two\n');
    utimesSync(file, new Date(), new Date(Date.now() + 5_000)); // the kubelet's rotation: a new file
    expect(t.current()).toBe('one'); // within the interval: no read
    now += 60_000;
    expect(t.current()).toBe('two');
    rmSync(file);
    now += 60_000;
    expect(t.current()).toBeUndefined();
  });
});

describe('BrokerCredentials', () => {
  const file = join(dir, 'tok');
  writeFileSync(file, 'secret-token');
  const token = new ServiceToken(file);

  it('sends the token to the configured broker and its Service names only', () => {
    const c = new BrokerCredentials(token, ['http://berth-broker'], 'berth-system');
    const auth = { authorization: 'Bearer secret-token' };
    expect(c.headersFor('http://berth-broker/stream/q')).toEqual(auth);
    expect(c.headersFor('http://berth-broker.berth-system.svc.cluster.local:80/messages')).toEqual(auth);
    expect(c.headersFor('http://berth-broker.berth-system.svc:80/x')).toEqual(auth);
    for (const other of [
      'http://berth-broker:8080/x', // another port: another server
      'https://berth-broker/x',
      'http://berth-broker.tenant-a.svc.cluster.local/messages', // a Service a tenant controls
      'http://memory.example.com/messages',
      'http://169.254.169.254/',
      'not a url',
    ])
      expect(c.headersFor(other), other).toEqual({});
  });

  it('gives no aliases to public or two-label names, and trusts declared brokers', () => {
    const c = new BrokerCredentials(token, ['http://broker.example.com', 'http://a.b'], 'ns');
    expect(c.isBroker('http://broker.example.com/x')).toBe(true);
    expect(c.isBroker('http://broker.example.com.svc.cluster.local/x')).toBe(false);
    expect(c.isBroker('http://a.b.svc.cluster.local/x')).toBe(false);
    c.trust('http://berth-broker.tenant-a.svc.cluster.local:80');
    expect(c.isBroker('http://berth-broker.tenant-a.svc.cluster.local/messages')).toBe(true);
  });

  it('sends nothing without a token file (local runs)', () => {
    const c = brokerCredentials(['http://127.0.0.1:8081'], { BROKER_TOKEN_FILE: join(dir, 'absent') });
    expect(c.isBroker('http://127.0.0.1:8081/messages')).toBe(true);
    expect(c.headersFor('http://127.0.0.1:8081/messages')).toEqual({});
  });
});

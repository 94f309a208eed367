import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RedisChunkStore } from '../../pkg/broker/chunks/redis-store.ts';
import { chunkText } from '../../pkg/broker/chunks/types.ts';
import { freePort } from '../../pkg/kube/controlplane/ports.ts';
import { recordingLogger } from '../support/logs.ts';
import { post } from './harness.ts';
import { brokerOn, eventually, OwnRedis, openStore } from './redis-support.ts';

const texts = (cs: Record<string, unknown>[]) => cs.map((c) => chunkText(c));

const servers: OwnRedis[] = [];
afterAll(async () => {
  for (const s of servers) await s.destroy();
});

const capture = () => recordingLogger('debug');

/** Appends one chunk every few ms until stopped; remembers what was acknowledged and how it failed. */
function writer(store: RedisChunkStore) {
  const acked: number[] = [];
  const failures: Array<{ status?: number; code?: string }> = [];
  let stop = false;
  const done = (async () => {
    for (let i = 0; !stop; i++) {
      try {
        const [e] = await store.append('w', texts([{ i }]));
        if (e) acked.push(e.seq);
      } catch (err) {
        failures.push(err as { status?: number; code?: string });
      }
      await new Promise((r) => setTimeout(r, 3));
    }
  })();
  return {
    acked,
    failures,
    stop: async () => {
      stop = true;
      await done;
    },
  };
}

describe('Redis chunk store outage (a redis-server of the test, stopped and restarted)', () => {
  it('answers 503 with Retry-After while Redis is down, recovers on its own, and keeps every acknowledged chunk', async () => {
    const redis = new OwnRedis(await freePort());
    servers.push(redis);
    await redis.start();
    const log = capture();
    const store = await openStore({ url: redis.url, commandTimeoutMs: 1000 }, log.logger);
    const broker = await brokerOn(store);
    const seen: number[] = [];
    store.onAppend((e) => seen.push(e.seq));
    const w = writer(store);
    try {
      expect((await post(`${broker.url}/stream/h`, [{ n: 1 }, { n: 2 }])).status).toBe(200);
      await eventually(() => w.acked.length >= 20);

      await redis.stop();
      await eventually(() => !store.healthy());
      expect(store.health()).toMatchObject({ ok: false, backend: 'redis' });
      const down = await post(`${broker.url}/stream/h`, [{ n: 3 }]);
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('2');
      const body = await down.json();
      expect(body.error).toMatchObject({ code: 'storage_unavailable', details: { backend: 'redis' } });
      expect(body.error.message).toMatch(/chunk storage \(Redis\) is unavailable/);
      const nd = await fetch(`${broker.url}/stream/h`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: '{"n":4}\n',
      });
      expect(nd.status).toBe(503);
      expect(nd.headers.get('retry-after')).toBe('2');
      expect((await nd.json()).error).toMatchObject({
        code: 'storage_unavailable',
        details: { chunks_received: 0 },
      });
      for (const res of await Promise.all([
        post(`${broker.url}/stream/h/complete`, ''),
        fetch(`${broker.url}/stream?query=h`),
        fetch(`${broker.url}/stream/h?from-beginning=true`),
        fetch(`${broker.url}/stream?watch=true&from-beginning=true`),
      ]))
        expect(res.status).toBe(503);
      const ackedWhileDown = w.acked.length;
      await new Promise((r) => setTimeout(r, 300));
      expect(w.acked.length).toBe(ackedWhileDown);
      expect(w.failures.length).toBeGreaterThan(0);
      expect(w.failures.every((f) => f.status === 503 && f.code === 'storage_unavailable')).toBe(true);

      await redis.start();
      await eventually(() => store.healthy(), 15_000);
      expect((await post(`${broker.url}/stream/h`, [{ n: 5 }])).status).toBe(200);
      await eventually(() => w.acked.length > ackedWhileDown + 20, 15_000);
      await w.stop();

      // Every acknowledged chunk is stored; the listener saw exactly the stored records, in order.
      const stored = (await store.page('w', 0, 10_000)).items.map((e) => e.seq);
      expect(stored).toEqual(expect.arrayContaining(w.acked));
      const all = (await store.page(undefined, 0, 10_000)).items.map((e) => e.seq);
      await eventually(() => seen.length >= all.length);
      expect(seen).toEqual(all);
      expect((await store.page('h', 0, 10)).items.length).toBe(3);
      expect(log.text()).toMatch(/chunk reader lost Redis/);
    } finally {
      await w.stop();
      await broker.close();
      await store.close();
    }
  });

  it('starts while Redis is unreachable, answers 503, and serves once it appears', async () => {
    const redis = new OwnRedis(await freePort());
    servers.push(redis);
    const store = await openStore({ url: redis.url, connectTimeoutMs: 500 });
    try {
      expect(store.healthy()).toBe(false);
      await expect(store.append('q', texts([{ n: 1 }]))).rejects.toMatchObject({ status: 503 });
      await expect(store.state('q')).rejects.toMatchObject({ status: 503 });
      const seen: number[] = [];
      store.onAppend((e) => seen.push(e.seq));
      await redis.start();
      await eventually(() => store.healthy(), 15_000);
      await store.append('q', texts([{ n: 1 }, { n: 2 }]));
      await eventually(() => seen.length === 2);
      expect(seen).toEqual([1, 2]);
    } finally {
      await store.close();
    }
  });
});

describe('Redis chunk store over TLS (rediss://, own CA, ACL user from the URL)', () => {
  it('connects with the CA file and the URL credentials, never logs the password, and refuses an unknown CA', async () => {
    const redis = new OwnRedis(await freePort());
    servers.push(redis);
    const dir = redis.dir;
    const ossl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    ossl(
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '1',
      '-subj',
      '/CN=berth-test-ca',
    );
    ossl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
    ossl(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-out',
      'server.crt',
      '-days',
      '1',
      '-extfile',
      'san.ext',
    );
    const tlsPort = redis.port;
    const tls = new OwnRedis(tlsPort, [
      '--port',
      '0',
      '--tls-port',
      String(tlsPort),
      '--tls-cert-file',
      join(dir, 'server.crt'),
      '--tls-key-file',
      join(dir, 'server.key'),
      '--tls-ca-cert-file',
      join(dir, 'ca.crt'),
      '--tls-auth-clients',
      'no',
      '--user',
      'default',
      'off',
      '--user',
      'berth',
      'on',
      '>pw-Zq8-secret',
      '~*',
      '&*',
      '+@all',
    ]);
    servers.push(tls);
    await tls.start();
    const url = `rediss://berth:pw-Zq8-secret@127.0.0.1:${tlsPort}`;
    const log = capture();
    const store = await openStore({ url, caFile: join(dir, 'ca.crt') }, log.logger);
    const seen: number[] = [];
    store.onAppend((e) => seen.push(e.seq));
    try {
      expect(store.healthy()).toBe(true);
      await store.append('t', texts([{ n: 1 }]));
      await store.complete('t');
      await eventually(() => seen.length === 2);
      expect((await store.page('t', 0, 10)).items.map((e) => e.kind)).toEqual(['chunk', 'complete']);
    } finally {
      await store.close();
    }
    // Without the CA the server's certificate is not trusted: no connection, 503s, reason in health.
    const untrusted = await openStore({ url, connectTimeoutMs: 1000 }, log.logger);
    const wrongPw = await openStore(
      { url: url.replace('pw-Zq8-secret', 'nope-wrong'), caFile: join(dir, 'ca.crt') },
      log.logger,
    );
    try {
      expect(untrusted.healthy()).toBe(false);
      expect(untrusted.health().error).toMatch(/certificate/i);
      await expect(untrusted.append('t', texts([{ n: 2 }]))).rejects.toMatchObject({ status: 503 });
      expect(wrongPw.healthy()).toBe(false);
      expect(wrongPw.health().error).toMatch(/WRONGPASS|invalid username-password/i);
    } finally {
      await untrusted.close();
      await wrongPw.close();
    }
    expect(log.text()).toMatch(/redis unreachable at start/);
    expect(log.text()).not.toContain('pw-Zq8-secret');
  });
});

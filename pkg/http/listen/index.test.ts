import { describe, expect, it } from 'vitest';
import { isLoopbackHost, listenHttp, urlHost } from './index.ts';

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['localhost', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['192.168.1.1', false],
    ['fe80::1', false],
    ['no-such-host.invalid', false],
  ])('%s → %s', async (host, expected) => expect(await isLoopbackHost(host)).toBe(expected));
});

describe('urlHost', () => {
  it('shows a reachable host, with brackets for IPv6', () => {
    expect(urlHost(undefined)).toBe('127.0.0.1');
    expect(urlHost('0.0.0.0')).toBe('127.0.0.1');
    expect(urlHost('::')).toBe('127.0.0.1');
    expect(urlHost('10.0.0.5')).toBe('10.0.0.5');
    expect(urlHost('::1')).toBe('[::1]');
    expect(urlHost('localhost')).toBe('localhost');
  });
});

describe('listenHttp', () => {
  const hello = () => new Response('hello');

  it('listens on loopback (port 0: a free one), answers at its url, and closes', async () => {
    const l = await listenHttp(hello, { port: 0 });
    expect(l.port).toBeGreaterThan(0);
    expect(l.url).toBe(`http://127.0.0.1:${l.port}`);
    expect(l.server.address()).toMatchObject({ address: '127.0.0.1', port: l.port });
    const res = await fetch(l.url);
    expect(await res.text()).toBe('hello');
    await l.close();
    expect(l.server.listening).toBe(false);
    await expect(fetch(l.url)).rejects.toThrow();
  });

  it('rejects with the listen error when the port is taken', async () => {
    const first = await listenHttp(hello, { port: 0 });
    try {
      await expect(listenHttp(hello, { port: first.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await first.close();
    }
  });

  it('shows the unspecified address as 127.0.0.1 in its url', async () => {
    const l = await listenHttp(hello, { port: 0, host: '0.0.0.0' });
    try {
      expect(l.url).toBe(`http://127.0.0.1:${l.port}`);
      expect(await (await fetch(l.url)).text()).toBe('hello');
    } finally {
      await l.close();
    }
  });
});

describe('listenHttp: the Node adapter, loaded by the first request', () => {
  it('serves requests that arrive together before it has loaded, bodies included, in full', async () => {
    const echo = async (req: Request) => new Response(`${req.method} ${await req.text()}`);
    const l = await listenHttp(echo, { port: 0 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          fetch(l.url, { method: 'POST', body: `body-${i}-${'x'.repeat(i * 1000)}` }).then((r) => r.text()),
        ),
      );
      expect(answers).toEqual(answers.map((_, i) => `POST body-${i}-${'x'.repeat(i * 1000)}`));
    } finally {
      await l.close();
    }
  });
});

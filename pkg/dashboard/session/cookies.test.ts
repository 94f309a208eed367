import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { CHUNK_SIZE, ChunkedCookie } from './cookies.ts';

/** An app that writes `?value` (or clears) and echoes what it reads, as the session store does. */
function app(secure = false) {
  const jar = new ChunkedCookie('berth.session-token', { secure, path: '/team-a' });
  const a = new Hono();
  a.get('/write', (c) => {
    jar.write(c, c.req.query('value') ?? '', 1800);
    return c.text('ok');
  });
  a.get('/read', (c) => c.text(jar.read(c) ?? '<none>'));
  a.get('/clear', (c) => {
    jar.clear(c);
    return c.text('ok');
  });
  return a;
}

const cookieHeader = (setCookies: string[]) =>
  setCookies
    .map((l) => l.split(';')[0] as string)
    .filter((pair) => !pair.endsWith('='))
    .join('; ');

describe('ChunkedCookie', () => {
  it('keeps a small value in one cookie with the session attributes', async () => {
    const res = await app().request('/write?value=small');
    expect(res.headers.getSetCookie()).toEqual([
      'berth.session-token=small; Max-Age=1800; Path=/team-a; HttpOnly; SameSite=Lax',
    ]);
  });

  it('splits a large value into numbered chunks and joins them on read', async () => {
    const big = 'x'.repeat(CHUNK_SIZE * 2 + 10);
    const written = (await app().request(`/write?value=${big}`)).headers.getSetCookie();
    expect(written.map((l) => l.split('=')[0])).toEqual([
      'berth.session-token.0',
      'berth.session-token.1',
      'berth.session-token.2',
    ]);
    for (const line of written) expect(line.length).toBeLessThan(4096);
    const read = await app().request('/read', { headers: { cookie: cookieHeader(written) } });
    expect(await read.text()).toBe(big);
  });

  it('expires chunks a smaller value no longer needs', async () => {
    const cookie = 'berth.session-token.0=aaa; berth.session-token.1=bbb; berth.session-token.2=ccc';
    const res = await app().request('/write?value=small', { headers: { cookie } });
    const lines = res.headers.getSetCookie();
    expect(lines[0]).toMatch(/^berth\.session-token=small;/);
    expect(lines.slice(1).map((l) => l.split(';').slice(0, 2).join(';'))).toEqual([
      'berth.session-token.0=; Max-Age=0',
      'berth.session-token.1=; Max-Age=0',
      'berth.session-token.2=; Max-Age=0',
    ]);
  });

  it('clears every part, and behind https uses Secure and the __Secure- prefix', async () => {
    const cookie = '__Secure-berth.session-token.0=a; __Secure-berth.session-token.1=b; other=keep';
    const lines = (await app(true).request('/clear', { headers: { cookie } })).headers.getSetCookie();
    expect(lines).toHaveLength(2);
    for (const l of lines)
      expect(l).toMatch(
        /^__Secure-berth\.session-token\.\d=; Max-Age=0; Path=\/team-a; HttpOnly; Secure; SameSite=Lax$/,
      );
  });
});

import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { REQUEST_ID_HEADER, requestId, requestIdOf } from './index.ts';

const app = new Hono();
app.use('*', requestId());
app.get('/', (c) => c.text(requestIdOf(c) ?? 'missing'));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('requestId', () => {
  it('makes a UUID when the caller sends none, echoes it and exposes it to the handler', async () => {
    const res = await app.request('/');
    const id = res.headers.get(REQUEST_ID_HEADER) ?? '';
    expect(id).toMatch(UUID);
    expect(await res.text()).toBe(id);
    const other = await app.request('/');
    expect(other.headers.get(REQUEST_ID_HEADER)).not.toBe(id);
  });

  it("keeps a caller's short printable id", async () => {
    const res = await app.request('/', { headers: { [REQUEST_ID_HEADER]: 'trace-42:abc/def' } });
    expect(res.headers.get(REQUEST_ID_HEADER)).toBe('trace-42:abc/def');
    expect(await res.text()).toBe('trace-42:abc/def');
  });

  it('replaces an id that is too long or carries characters unfit for logs and headers', async () => {
    for (const given of ['x'.repeat(129), 'a b', 'id"quoted', '<script>']) {
      const res = await app.request('/', { headers: { [REQUEST_ID_HEADER]: given } });
      expect(res.headers.get(REQUEST_ID_HEADER)).toMatch(UUID);
    }
  });
});

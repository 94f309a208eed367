import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { accessLog, LOGGED_TEXT_CHARS } from './index.ts';

describe('accessLog with hostile requests', () => {
  it('cuts a 14 KB path, long header names and values, and keeps at most 64 headers', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({
      level: 'trace',
      destination: { write: (s: string) => lines.push(JSON.parse(s)) },
    });
    const app = new Hono();
    app.use('*', accessLog(logger, { traceHeaders: true }));
    app.get('*', (c) => c.text('ok'));
    const headers = new Headers({
      [`impersonate-extra-${'a-'.repeat(6000)}`]: 'x',
      'x-long': 'b'.repeat(20_000),
    });
    for (let i = 0; i < 100; i++) headers.set(`z-h${i}`, String(i)); // sorted after x-long
    const start = performance.now();
    await app.request(`/${'a-'.repeat(7000)}`, { headers });
    expect(performance.now() - start).toBeLessThan(500);
    const line = lines.find((l) => l.msg === 'request') as { path: string; headers: Record<string, string> };
    expect(line.path.length).toBeLessThan(LOGGED_TEXT_CHARS + 40);
    expect(line.path).toMatch(/…\[truncated \d+ bytes\]$/);
    expect(line.headers['x-long']?.length).toBeLessThan(LOGGED_TEXT_CHARS + 40);
    for (const name of Object.keys(line.headers)) expect(name.length).toBeLessThan(LOGGED_TEXT_CHARS + 40);
    expect(Object.keys(line.headers)).toHaveLength(65);
    expect(line.headers['…']).toBe('[more headers]');
  });
});

import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { requestId } from '../request-id/index.ts';
import { accessLog } from './index.ts';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level, destination: { write: (s: string) => lines.push(JSON.parse(s)) } });
  return { logger, lines };
}

describe('accessLog', () => {
  it('logs one debug line per answered request with who made it, headers only at trace (redacted)', async () => {
    for (const level of ['debug', 'trace']) {
      const { logger, lines } = capture(level);
      const app = new Hono();
      app.use('*', requestId());
      app.use('*', accessLog(logger, { who: () => ({ user: 'ada' }), traceHeaders: true }));
      app.get('/x', (c) => c.text('ok', 201));
      await app.request('/x', { headers: { authorization: 'Bearer sekrit-token', 'x-request-id': 'r1' } });
      const line = lines.find((l) => l.msg === 'request');
      expect(line).toMatchObject({ method: 'GET', path: '/x', status: 201, requestId: 'r1', user: 'ada' });
      expect(typeof line?.ms).toBe('number');
      expect('headers' in (line ?? {})).toBe(level === 'trace');
      expect(JSON.stringify(lines)).not.toContain('sekrit-token');
    }
  });

  it('writes nothing above debug', async () => {
    const { logger, lines } = capture('info');
    const app = new Hono();
    app.use('*', accessLog(logger));
    app.get('/x', (c) => c.text('ok'));
    expect((await app.request('/x')).status).toBe(200);
    expect(lines).toEqual([]);
  });
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, HttpError, requestJson } from './http.ts';

let server: http.Server;
let base: string;
const seen: Array<{ method: string; url: string; body: string; type: string | undefined }> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, type: req.headers['content-type'] });
      if (req.url === '/moved') {
        res.writeHead(307, { location: '/messages?from=redirect' });
        return res.end();
      }
      if (req.url === '/missing') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end('{"error":"no such conversation"}');
      }
      if (req.url === '/slow') return; // never answers: the caller's signal ends it
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echo: body ? JSON.parse(body) : null, url: req.url }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('requestJson over the client’s request path', () => {
  const client = createHttpClient();
  afterAll(() => client.close());

  it('sends the JSON body with its type and parses the answer, query string kept', async () => {
    const out = await requestJson<{ echo: unknown; url: string }>(
      client.send,
      'Memory m',
      `${base}/messages?a=1&b=2`,
      {
        method: 'POST',
        body: { messages: [{ role: 'user', content: 'é' }] },
      },
    );
    expect(out).toEqual({ echo: { messages: [{ role: 'user', content: 'é' }] }, url: '/messages?a=1&b=2' });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', type: 'application/json' });
  });

  it('follows a redirect as fetch does', async () => {
    const out = await requestJson<{ url: string }>(client.send, 'Memory m', `${base}/moved`, {
      method: 'GET',
    });
    expect(out.url).toBe('/messages?from=redirect');
  });

  it('throws an HttpError naming the call and the status, with the answer’s start', async () => {
    const err = await requestJson(client.send, 'Memory m: GET /messages', `${base}/missing`, {
      method: 'GET',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(404);
    expect((err as Error).message).toBe(
      'Memory m: GET /messages: HTTP 404: {"error":"no such conversation"}',
    );
  });

  it('ends with the signal’s reason when aborted, and names refused connections', async () => {
    const ctl = new AbortController();
    const pending = requestJson(client.send, 'Memory m', `${base}/slow`, {
      method: 'GET',
      signal: ctl.signal,
    });
    ctl.abort(new Error('query deadline'));
    await expect(pending).rejects.toThrow('query deadline');
    const refused = await requestJson(client.send, 'Memory m', 'http://127.0.0.1:1/messages', {
      method: 'GET',
    }).catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(/^Memory m: .*ECONNREFUSED/);
  });
});

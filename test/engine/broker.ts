/**
 * The real broker for engine tests, started as `berth broker` (its documented interface) on a free
 * port, plus small readers of what it holds (JSON lists and SSE streams).
 */
import { expect, vi } from 'vitest';
import { spawnBerth } from '../support/process.ts';
import { freePort } from './support.ts';

export interface TestBroker {
  url: string;
  stop(): Promise<void>;
}

export async function startTestBroker(): Promise<TestBroker> {
  const port = await freePort();
  const child = spawnBerth(['broker', '--port', String(port)], { ...process.env, LOG_LEVEL: 'warn' });
  const url = `http://127.0.0.1:${port}`;
  await vi.waitFor(
    async () => {
      if (child.proc.exitCode !== null) throw new Error(`broker exited: ${child.output()}`);
      const res = await fetch(`${url}/health`).catch(() => undefined);
      expect(res?.ok).toBe(true);
    },
    { timeout: 30_000, interval: 50 },
  );
  return {
    url,
    stop: async () => {
      child.proc.kill('SIGTERM');
      await child.exited;
    },
  };
}

export async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/**
 * Reads an SSE stream until `[DONE]` (or `until` says stop), returning the parsed `data:` payloads.
 * `onData` sees each payload as it arrives.
 */
export async function readSse(
  url: string,
  opts: { onData?: (data: unknown) => void; timeoutMs?: number } = {},
): Promise<unknown[]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), opts.timeoutMs ?? 20_000);
  const out: unknown[] = [];
  try {
    const res = await fetch(url, { signal: ac.signal, headers: { accept: 'text/event-stream' } });
    if (!res.ok || !res.body) throw new Error(`GET ${url}: HTTP ${res.status}`);
    const decoder = new TextDecoder();
    let buf = '';
    for await (const part of res.body) {
      buf += decoder.decode(part as Uint8Array, { stream: true });
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, '');
        buf = buf.slice(nl + 1);
        nl = buf.indexOf('\n');
        if (!line.startsWith('data:')) continue;
        const payload = line.slice(5).trim();
        if (payload === '[DONE]') return out;
        const data = JSON.parse(payload) as unknown;
        out.push(data);
        opts.onData?.(data);
      }
    }
    return out;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

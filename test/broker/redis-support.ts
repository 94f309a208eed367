import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { openRedisChunkStore, type RedisChunkStoreOptions } from '../../pkg/broker/chunks/redis-store.ts';
import { createLogger, type Logger } from '../../pkg/log/index.ts';
import { redisUrl } from '../support/services.ts';

export { brokerOn } from './redis-app.ts';

/** The shared test Redis (never flushed: every test works under its own key prefix). */
export const sharedRedisUrl = () => redisUrl(inject('services'));
export const quiet = createLogger({ level: 'silent' });
export const uniquePrefix = () => `test:chunks:${randomUUID()}:`;

export function openStore(opts: Partial<RedisChunkStoreOptions> & { url: string }, logger: Logger = quiet) {
  return openRedisChunkStore(
    { ttlSeconds: 3600, maxChunks: 100_000, keyPrefix: uniquePrefix(), ...opts },
    logger,
  );
}

/** Deletes every key under a prefix (SCAN, never FLUSH: the Redis is shared). */
export async function dropPrefix(url: string, prefix: string): Promise<void> {
  const r = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await r.del(...keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}

/** A redis-server of the test's own (outages stop it, never the shared one), with an append-only file. */
export class OwnRedis {
  proc: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'berth-redis-'));
  readonly port: number;
  readonly extraArgs: string[];
  constructor(port: number, extraArgs: string[] = []) {
    this.port = port;
    this.extraArgs = extraArgs;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes'];
    const p = spawn('redis-server', [...args, '--dir', this.dir, ...this.extraArgs], { stdio: 'pipe' });
    this.proc = p;
    let out = '';
    p.stdout?.on('data', (d) => {
      out += String(d);
    });
    const end = Date.now() + 10_000;
    while (!/Ready to accept connections/.test(out)) {
      if (p.exitCode !== null || Date.now() > end) throw new Error(`redis-server did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** SIGTERM: Redis fsyncs its append-only file and exits (a clean stop, as an orchestrator does). */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    await exited;
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export { eventually } from './pg-harness.ts';

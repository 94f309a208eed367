import { readFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Registry } from 'prom-client';
import { generate } from 'selfsigned';
import { metricsHandler } from '../http/index.ts';
import type { Runnable } from '../kube/manager.ts';
import type { InformerHealth } from '../kube/supervisor.ts';

export interface RunningServer {
  port: number;
  close(): Promise<void>;
}

export interface HealthSource {
  informers(): InformerHealth[];
  /** Ready once the caches synced (a standby is ready too: it takes over with warm caches). */
  ready(): boolean;
  leader(): { isLeader: boolean; leader?: string };
}

function listen(server: ReturnType<typeof serve>): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            (server as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
  });
}

/** A server as a Runnable: it serves whether or not this process leads (a standby answers probes). */
export class ServerRunnable implements Runnable {
  readonly name: string;
  readonly needLeaderElection = false;
  port: number | undefined;
  private readonly listen: () => Promise<RunningServer>;
  private server: RunningServer | undefined;

  constructor(name: string, listen: () => Promise<RunningServer>) {
    this.name = name;
    this.listen = listen;
  }

  async start(): Promise<void> {
    this.server = await this.listen();
    this.port = this.server.port;
  }

  async stop(): Promise<void> {
    await this.server?.close();
    this.server = undefined;
  }
}

/**
 * `/healthz` and `/health` (liveness: the process answers) and `/readyz` (caches synced, not
 * stopping), with informer details: the same probes as the API service and the broker.
 */
export function startProbes(
  health: HealthSource,
  port: number,
  hostname = '0.0.0.0',
): Promise<RunningServer> {
  const app = new Hono();
  const body = () => ({ informers: health.informers(), ...health.leader() });
  for (const path of ['/healthz', '/health']) app.get(path, (c) => c.json({ status: 'ok', ...body() }));
  app.get('/readyz', (c) => {
    const ready = health.ready();
    return c.json({ status: ready ? 'ready' : 'not ready', ...body() }, ready ? 200 : 503);
  });
  return listen(serve({ fetch: app.fetch, port, hostname }));
}

export interface TlsFiles {
  certFile?: string;
  keyFile?: string;
}

/**
 * The given certificate, else a fresh self-signed one for localhost and 127.0.0.1, made in-process:
 * the container image has no openssl binary.
 */
export async function loadOrCreateCert(
  tls: TlsFiles,
): Promise<{ cert: Buffer; key: Buffer; selfSigned: boolean }> {
  if (tls.certFile && tls.keyFile) {
    return { cert: await readFile(tls.certFile), key: await readFile(tls.keyFile), selfSigned: false };
  }
  if (tls.certFile || tls.keyFile) throw new Error('metrics TLS needs both a certificate and a key file');
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: 'berth-controller-metrics' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 365 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { cert: Buffer.from(pems.cert), key: Buffer.from(pems.private), selfSigned: true };
}

/** Prometheus metrics over HTTPS at `/metrics`: the process's default metrics and the controller's. */
export async function startMetrics(
  registry: Registry,
  port: number,
  tls: TlsFiles,
  hostname = '0.0.0.0',
): Promise<RunningServer & { selfSigned: boolean }> {
  const { cert, key, selfSigned } = await loadOrCreateCert(tls);
  const app = new Hono();
  app.get('/metrics', metricsHandler(registry));
  const server = serve({
    fetch: app.fetch,
    port,
    hostname,
    createServer: createHttpsServer,
    serverOptions: { cert, key },
  });
  return { ...(await listen(server)), selfSigned };
}

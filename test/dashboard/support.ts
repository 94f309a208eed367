import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDashboardServer } from '../../pkg/dashboard/server.ts';
import { loadDashboardSettings } from '../../pkg/dashboard/settings.ts';
import { freePort } from '../../pkg/kube/controlplane/ports.ts';
import { captureLogs } from '../auth/support.ts';

export { freePort };

/** A clock the dashboard reads; tests move it forward to expire sessions and age tokens at once. */
export class TestClock {
  #offsetMs = 0;
  now = () => Date.now() + this.#offsetMs;
  advance(ms: number) {
    this.#offsetMs += ms;
  }
}

export interface TestDashboard {
  /** BASE_URL: what the browser uses (the base path included, no trailing slash). */
  url: string;
  origin: string;
  clock: TestClock;
  /** Everything the dashboard logged (trace level). */
  logs(): string;
  close(): Promise<void>;
}

export const AUTH_SECRET = `test-auth-secret-${crypto.randomUUID()}`;

/**
 * `berth dashboard` in this process, configured through the environment exactly as the command is
 * (loadDashboardSettings), on `port` (pick one with freePort when the provider must know it first).
 */
export async function startDashboard(env: NodeJS.ProcessEnv, port = 0): Promise<TestDashboard> {
  const captured = captureLogs();
  const settings = loadDashboardSettings({ AUTH_SECRET, ...env }, captured.logger);
  const clock = new TestClock();
  const running = await startDashboardServer({
    settings,
    logger: captured.logger,
    port,
    host: '127.0.0.1',
    now: clock.now,
  });
  const origin = `http://127.0.0.1:${running.port}`;
  return { url: `${origin}${settings.basePath}`, origin, clock, logs: captured.text, close: running.close };
}

/** The environment of an sso dashboard at `origin` + `basePath` for the provider `oidc`. */
export function ssoEnv(
  oidc: { issuer: string; clientId: string; clientSecret: string },
  origin: string,
  basePath: string,
  api: string,
  mode = 'sso',
): NodeJS.ProcessEnv {
  return {
    AUTH_MODE: mode,
    BASE_URL: `${origin}${basePath}`,
    AUTH_URL: `${origin}${basePath}/api/auth`,
    BASE_PATH: basePath,
    OIDC_PROVIDER_ID: 'test-idp',
    OIDC_PROVIDER_NAME: 'Test IdP',
    OIDC_ISSUER_URL: oidc.issuer,
    OIDC_CLIENT_ID: oidc.clientId,
    OIDC_CLIENT_SECRET: oidc.clientSecret,
    API_SERVICE_URL: api,
  };
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface StubApi {
  url: string;
  seen: SeenRequest[];
  /** Answers a path (exact, query ignored) with a handler; unhandled paths get 404 envelopes. */
  on(path: string, handler: (req: SeenRequest, res: ServerResponse) => void): void;
  close(): Promise<void>;
}

/**
 * A small real HTTP server standing in for the API service where the control plane adds nothing:
 * it records every request (method, URL, headers, body) the proxy sends it.
 */
export async function startStubApi(namespace = 'stub-ns'): Promise<StubApi> {
  const seen: SeenRequest[] = [];
  const handlers = new Map<string, (req: SeenRequest, res: ServerResponse) => void>();
  handlers.set('/v1/context', (_r, res) => json(res, 200, { namespace, instanceNamespace: namespace }));
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      const r = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body };
      seen.push(r);
      const handler = handlers.get(new URL(r.url, 'http://x').pathname);
      if (handler) handler(r, res);
      else json(res, 404, { error: { code: 'not_found', message: `no route for ${r.method} ${r.url}` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    on: (path, handler) => void handlers.set(path, handler),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** The `name=value` pairs and attributes of each Set-Cookie of a response. */
export function setCookies(res: Response): Array<{ name: string; value: string; attrs: string[] }> {
  return res.headers.getSetCookie().map((line) => {
    const [pair = '', ...attrs] = line.split(';').map((s) => s.trim());
    const eq = pair.indexOf('=');
    return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attrs };
  });
}

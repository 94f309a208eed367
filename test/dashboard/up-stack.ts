/**
 * `berth up` as a user runs it — broker, controller with the engine and the demo model, API,
 * built-in evaluator, demo MCP server and dashboard in one process — on the test control plane,
 * confined to a namespace of its own, its dashboard in `sso` mode at the tenant base path
 * `/<namespace>/` behind a real OpenID provider; or in `open` mode at the root (the benchmark).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { type InteractiveOidc, startInteractiveOidc } from '../fixtures/oidc/interactive.ts';
import { createNamespace, kubectl } from '../support/kube.ts';
import { ROOT, type Spawned, spawnBerth } from '../support/process.ts';
import { AUTH_SECRET, freePort, ssoEnv } from './support.ts';

export interface UpStack {
  ns: string;
  /** What the browser uses: origin + base path, no trailing slash. */
  dash: string;
  origin: string;
  prefix: string;
  api: string;
  evaluator: string;
  demoMcp: string;
  oidc?: InteractiveOidc;
  up: Spawned;
  /** Applies manifests/samples/ to the namespace, pointed at this process's evaluator and MCP server. */
  applySamples(): Promise<void>;
  close(): Promise<void>;
}

export async function startUpStack(opts: { sso: boolean; prefix?: string }): Promise<UpStack> {
  const ns = await createNamespace(opts.sso ? 'dash-up' : 'dash-bench');
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const prefix = opts.sso ? `/${ns}` : '';
  let oidc: InteractiveOidc | undefined;
  let env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: inject('kubeconfig'), AUTH_MODE: 'open' };
  if (opts.sso) {
    oidc = await startInteractiveOidc({
      redirectUris: [`${origin}${prefix}/api/auth/callback/test-idp`],
      postLogoutRedirectUris: [`${origin}${prefix}/signout`],
    });
    env = {
      ...env,
      ...ssoEnv(oidc, origin, prefix, ''),
      AUTH_SECRET,
      OIDC_APPLICATION_ID: oidc.audience,
    };
    delete env.API_SERVICE_URL;
  }
  const stateDir = mkdtempSync(join(tmpdir(), 'berth-dash-up-')); // unused: the test control plane is reused
  const up = spawnBerth(
    [
      'up',
      '--namespace',
      ns,
      '--state-dir',
      stateDir,
      '--api-port',
      '0',
      '--broker-port',
      '0',
      '--dashboard-port',
      String(port),
      '--demo-mcp-port',
      '0',
      '--evaluator-port',
      '0',
    ],
    env,
  );
  let ready: Record<string, string>;
  try {
    ready = JSON.parse(await up.waitForLine(/"msg":"ready"/, 180_000));
  } catch (err) {
    up.proc.kill('SIGKILL');
    await oidc?.close();
    rmSync(stateDir, { recursive: true, force: true });
    throw new Error(`berth up did not start: ${(err as Error).message}\n${up.output().slice(-3000)}`);
  }
  const stack: UpStack = {
    ns,
    dash: `${origin}${prefix}`,
    origin,
    prefix,
    api: ready.api as string,
    evaluator: ready.evaluator as string,
    demoMcp: ready.demoMcp as string,
    oidc,
    up,
    async applySamples() {
      const dir = join(ROOT, 'manifests', 'samples');
      const yaml = readdirSync(dir)
        .filter((f) => f.endsWith('.yaml'))
        .sort()
        .map((f) => readFileSync(join(dir, f), 'utf8'))
        .join('\n---\n')
        // The samples name the default ports of `berth up`; this one listens on free ports.
        .replaceAll('http://127.0.0.1:9100', stack.evaluator)
        .replaceAll('http://127.0.0.1:8090/mcp', stack.demoMcp);
      const r = await kubectl(['apply', '-n', ns, '-f', '-'], yaml);
      if (r.code !== 0) throw new Error(`kubectl apply of the samples: ${r.stderr}`);
    },
    async close() {
      up.proc.kill('SIGINT');
      await up.exited;
      await oidc?.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
  return stack;
}

#!/usr/bin/env node
import { Command, Option } from 'commander';
import { namespaceName } from '../pkg/gateway/config.ts';
import { addControllerOptions } from './controller-options.ts';

// Each command's module is imported only when that command runs: `berth broker` does not load the
// controller, the Kubernetes client or the dashboard (its idle footprint, see docs/broker.md).

const program = new Command()
  .name('berth')
  .description('Berth: Kubernetes-native agent platform (controller, API service, broker, dashboard)')
  .version(process.env.npm_package_version ?? '0.1.0');

const port = (fallback: number) =>
  new Option('--port <port>', 'listen port')
    .env('PORT')
    .default(fallback)
    .argParser((v) => parsePort(v, '--port'));

function parsePort(v: string, name: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new Error(`${name} must be an integer between 0 and 65535, got ${JSON.stringify(v)}`);
  }
  return n;
}

const namespace = (description: string) =>
  new Option('--namespace <ns>', description).argParser((v) => {
    const r = namespaceName.safeParse(v);
    if (!r.success) throw new Error(`--namespace ${r.error.issues[0]?.message}, got ${JSON.stringify(v)}`);
    return v;
  });

program
  .command('up')
  .description(
    'Run the whole platform locally: control plane (etcd + kube-apiserver), controller, API, broker and dashboard',
  )
  .option('--state-dir <dir>', 'where control-plane data and the kubeconfig are kept', '.berth')
  .addOption(namespace('serve and watch only this namespace (default: serve "default", watch all)'))
  .addOption(
    new Option('--api-port <port>', 'API service port')
      .default(8000)
      .argParser((v) => parsePort(v, '--api-port')),
  )
  .addOption(
    new Option('--broker-port <port>', 'broker port')
      .default(8080)
      .argParser((v) => parsePort(v, '--broker-port')),
  )
  .addOption(
    new Option('--dashboard-port <port>', 'dashboard port')
      .default(3000)
      .argParser((v) => parsePort(v, '--dashboard-port')),
  )
  .addOption(
    // The demo MCP server (docs/mcp.md): always on loopback, whatever --host says.
    new Option('--demo-mcp-port <port>', 'demo MCP server port (127.0.0.1 only)')
      .default(8090)
      .argParser((v) => parsePort(v, '--demo-mcp-port')),
  )
  .option('--no-demo-mcp', 'do not start the demo MCP server')
  .addOption(
    // The built-in evaluator (docs/evaluations.md): always on loopback, whatever --host says.
    new Option('--evaluator-port <port>', 'built-in evaluator port (127.0.0.1 only)')
      .default(9100)
      .argParser((v) => parsePort(v, '--evaluator-port')),
  )
  .option('--no-evaluator', 'do not start the built-in evaluator')
  .addOption(
    new Option(
      '--host <address>',
      'address the API, broker and dashboard listen on (0.0.0.0 for every interface; beyond loopback, anyone who can reach this machine can call them)',
    )
      .default('127.0.0.1')
      .argParser((v) => {
        if (!v.trim()) throw new Error('--host must not be empty');
        return v.trim();
      }),
  )
  .action(async (opts) => (await import('./up.ts')).runUp(opts));

addControllerOptions(
  program
    .command('controller')
    .description('Run the controller: informers, reconcilers and the query engine (leader-elected)')
    .addOption(port(8081))
    .addOption(namespace('watch only this namespace')),
).action(async (opts) => (await import('./controller.ts')).runController(opts));

program
  .command('api')
  .description('Run the API service (/v1, /compat/v1, /docs)')
  .addOption(port(8000))
  .addOption(namespace('namespace this instance serves'))
  .action(async (opts) => (await import('./api.ts')).runApi(opts));

program
  .command('broker')
  .description('Run the broker: messages, chunks, traces, events, sessions and the memory contract')
  .addOption(port(8080))
  .action(async (opts: { port: number }) => (await import('./broker.ts')).runBroker({ port: opts.port }));

program
  .command('dashboard')
  .description(
    'Run the dashboard: OIDC sign-in (AUTH_MODE sso/hybrid), the /api proxy to API_SERVICE_URL and the UI',
  )
  .addOption(port(3000))
  .action(async (opts: { port: number }) =>
    (await import('./dashboard.ts')).runDashboard({ port: opts.port }),
  );

program
  .command('migrate')
  .description('Apply the broker SQL migrations to DATABASE_URL (advisory-locked)')
  .action(async () => (await import('./migrate.ts')).runMigrate());

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`berth: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

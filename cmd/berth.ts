#!/usr/bin/env node
import { Command, Option } from 'commander';
import { namespaceName } from '../pkg/gateway/config.ts';
import { runApi } from './api.ts';
import { runBroker } from './broker.ts';
import { addControllerOptions, runController } from './controller.ts';
import { runMigrate } from './migrate.ts';
import { runUp } from './up.ts';

const program = new Command()
  .name('berth')
  .description('Berth: Kubernetes-native agent platform (controller, API service, broker)')
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
    'Run the whole platform locally: control plane (etcd + kube-apiserver), controller, API and broker',
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
  .action(runUp);

addControllerOptions(
  program
    .command('controller')
    .description('Run the controller: informers, reconcilers and the query engine (leader-elected)')
    .addOption(port(8081))
    .addOption(namespace('watch only this namespace')),
).action(runController);

program
  .command('api')
  .description('Run the API service (/v1, /compat/v1, /docs)')
  .addOption(port(8000))
  .addOption(namespace('namespace this instance serves'))
  .action(runApi);

program
  .command('broker')
  .description('Run the broker: messages, chunks, traces, events, sessions and the memory contract')
  .addOption(port(8080))
  .action((opts: { port: number }) => runBroker({ port: opts.port }));

program
  .command('migrate')
  .description('Apply the broker SQL migrations to DATABASE_URL (advisory-locked)')
  .action(runMigrate);

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`berth: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

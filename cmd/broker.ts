import { ConfigError, loadBrokerConfig } from '../pkg/broker/config.ts';
import { startBroker } from '../pkg/broker/server.ts';
import { createLogger } from '../pkg/log/index.ts';

/**
 * `berth broker`: configuration from the environment (`--port` wins over PORT), then serve until
 * SIGINT/SIGTERM, which close streams and flush persistence before exiting.
 */
export async function runBroker(opts: { port?: number }): Promise<void> {
  let config: ReturnType<typeof loadBrokerConfig>;
  try {
    config = loadBrokerConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`berth broker: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  if (opts.port !== undefined) config.port = opts.port;
  const logger = createLogger({ name: 'broker', level: config.logLevel });
  let broker: Awaited<ReturnType<typeof startBroker>>;
  try {
    broker = await startBroker(config, logger);
  } catch (err) {
    // A backend that cannot be opened (PostgreSQL unreachable, schema not migrated): one clear
    // line, no stack; the orchestrator restarts us.
    logger.error(
      { err: { message: err instanceof Error ? err.message : String(err) } },
      'broker failed to start',
    );
    console.error(`berth broker: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    broker.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

import { startDashboardServer } from '../pkg/dashboard/server.ts';
import { type DashboardSettings, loadDashboardSettings, SettingsError } from '../pkg/dashboard/settings.ts';
import { createLogger } from '../pkg/log/index.ts';
import { settleAfterStart } from './settle.ts';
import { catchStopSignals } from './signals.ts';

/**
 * `berth dashboard`: the spec's dashboard settings from the environment, validated before anything
 * starts (a bad one exits 2 naming the variable), then serve until SIGINT/SIGTERM.
 */
export async function runDashboard(opts: { port: number }): Promise<void> {
  const signals = catchStopSignals(); // before anything listens: see cmd/signals.ts
  // Warnings while reading the settings (an invalid AUTH_MODE) go to the process's logger; a bad
  // LOG_LEVEL is one of the settings reported below, so this one does not trust it.
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  const level = levels.includes(process.env.LOG_LEVEL ?? '') ? process.env.LOG_LEVEL : 'info';
  const early = createLogger({ name: 'dashboard', level });
  let settings: DashboardSettings;
  try {
    settings = loadDashboardSettings(process.env, early);
  } catch (err) {
    if (err instanceof SettingsError) {
      console.error(`berth dashboard: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ name: 'dashboard', level: settings.logLevel });
  const dashboard = await startDashboardServer({ settings, logger, port: opts.port });
  settleAfterStart(logger);
  signals.stopWith(logger, () => dashboard.close());
}

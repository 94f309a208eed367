import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { redact, redactString } from './redact.ts';

export type { Logger } from 'pino';
export { REDACTED, redact, redactString } from './redact.ts';

export interface LogOptions {
  level?: string;
  name?: string;
  destination?: DestinationStream;
}

/**
 * The one logger factory of the project: JSON lines, with redaction applied to every record
 * (bindings, objects and messages), so no caller can leak a secret by forgetting to scrub.
 */
export function createLogger(opts: LogOptions = {}): Logger {
  const options: LoggerOptions = {
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    name: opts.name,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ level: label }),
      bindings: (b) => redact(b) as Record<string, unknown>,
      log: (obj) => redact(obj) as Record<string, unknown>,
    },
    hooks: {
      logMethod(args, method) {
        const redacted = args.map((a) => (typeof a === 'string' ? redactString(a) : a));
        method.apply(this, redacted as Parameters<typeof method>);
      },
    },
    serializers: { err: (e: unknown) => redact(e) },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

/** Cuts operation data (query input/output) to the spec's 48 characters for info-level logs. */
export function truncateForLog(text: string | undefined, max = 48): string | undefined {
  if (text === undefined) return undefined;
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

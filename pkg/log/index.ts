import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { redact, redactString } from './redact.ts';

export type { Logger } from 'pino';
export {
  capString,
  LIMITS,
  REDACTED,
  redact,
  redactString,
  redactValues,
  scrubTokens,
  TRUNCATED,
} from './redact.ts';

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
    serializers: {
      // formatters.log runs first and has already scrubbed a record's `err`: only an Error reaching
      // the serializer another way (a child's bindings) needs the walk, not a second pass over the text.
      err: (e: unknown) => (e instanceof Error ? redact(e) : e),
      // The message as written: after interpolation (`%s`, `%j`) and also when pino takes it from
      // an Error given in place of a message (`log.warn(err)`), which a hook on the arguments misses.
      msg: (m: unknown) => (typeof m === 'string' ? redactString(m) : m),
    },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

/** Cuts operation data (query input/output) to the spec's 48 characters for info-level logs. */
export function truncateForLog(text: string | undefined, max = 48): string | undefined {
  if (text === undefined) return undefined;
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

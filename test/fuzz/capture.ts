import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../pkg/log/index.ts';

/** A logger that keeps every error (and worse) line a service logs during a fuzz run. */
export function captureErrors(): { logger: Logger; lines: () => string[] } {
  const kept: string[] = [];
  const dest = new Writable({
    write(chunk, _enc, cb) {
      const line = String(chunk);
      if (/"level":"(error|fatal)"/.test(line)) kept.push(line.slice(0, 2000));
      cb();
    },
  });
  return { logger: createLogger({ level: 'warn', destination: dest as never }), lines: () => kept };
}

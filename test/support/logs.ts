import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../pkg/log/index.ts';

/** A logger whose lines a test can read (to see a connection drop and come back, say). */
export function recordingLogger(level: 'debug' | 'info' = 'info'): {
  logger: Logger;
  lines: string[];
  text: () => string;
} {
  const lines: string[] = [];
  const logger = createLogger({
    level,
    destination: new Writable({
      write(line, _enc, done) {
        lines.push(String(line));
        done();
      },
    }),
  });
  return { logger, lines, text: () => lines.join('') };
}

import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/**
 * Structured JSON logs, on stdout for the server; command-line tools pass fd 2 so their
 * stdout stays clean for results. Secrets never reach the logs (see the redact list).
 */
export function createLogger(config: Pick<Config, 'logLevel'>, fd: 1 | 2 = 1): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { service: 'palaver' },
      redact: {
        paths: ['req.headers.authorization', 'password', 'token', 'apiKey', 'signingSecret'],
        censor: '[redacted]',
      },
    },
    pino.destination(fd),
  );
}

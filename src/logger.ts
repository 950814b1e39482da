import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/** Structured JSON logs on stdout; secrets never reach them (see the redact list). */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    base: { service: 'palaver' },
    redact: {
      paths: ['req.headers.authorization', 'password', 'token', 'apiKey', 'signingSecret'],
      censor: '[redacted]',
    },
  });
}

import { writeSync } from 'node:fs';
import { DriverException } from '@mikro-orm/core';
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config.ts';

export type { Logger };

/** The fields of a database error that name what failed without carrying anyone's data. */
const DATABASE_ERROR_FIELDS = ['code', 'routine', 'constraint', 'table', 'column', 'schema', 'severity'] as const;

/** A PostgreSQL (pg, PGlite) error, or MikroORM's wrapping of one: a SQLSTATE and where it came from. */
function isDatabaseError(err: unknown): err is Error & Record<string, unknown> {
  if (err instanceof DriverException) return true;
  if (!(err instanceof Error)) return false;
  const e = err as Error & Record<string, unknown>;
  return typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && (typeof e.routine === 'string' || typeof e.severity === 'string');
}

/**
 * Database errors' messages hold the statement with its parameters, their `detail` the values
 * (a message's text, an email): logged as ids and codes only, with the stack's frames.
 */
function databaseError(err: Error & Record<string, unknown>): Record<string, unknown> {
  const safe: Record<string, unknown> = { type: err.constructor.name };
  for (const field of DATABASE_ERROR_FIELDS) if (typeof err[field] === 'string') safe[field] = err[field];
  const frames = (err.stack ?? '').split('\n').filter((line) => line.startsWith('    at '));
  const code = typeof err.code === 'string' ? err.code : '';
  safe.stack = [`${err.constructor.name} [${code}]`, ...frames].join('\n');
  return safe;
}

function chainHasDatabaseError(err: unknown, depth = 0): boolean {
  if (depth > 8 || !(err instanceof Error)) return false;
  return isDatabaseError(err) || chainHasDatabaseError(err.cause, depth + 1);
}

/** pino's error serializer, except that database errors, also as causes, lose their SQL and values. */
export function serializeError(err: unknown, depth = 0): unknown {
  if (isDatabaseError(err)) return databaseError(err);
  if (depth > 8 || !(err instanceof Error) || !chainHasDatabaseError(err.cause)) return pino.stdSerializers.err(err as Error);
  const e = err as Error & Record<string, unknown>;
  return {
    type: err.constructor.name,
    message: err.message,
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    stack: err.stack,
    cause: serializeError(err.cause, depth + 1),
  };
}

/**
 * An access line (`msg: "request"` with method, path, status, ms) as one readable line,
 * `GET /messages 200 4ms`: pino-pretty would print each field on a line of its own, six lines per
 * request. Its requestId is left out at the terminal (the JSON lines keep it).
 */
export function readableAccessLine(line: Record<string, unknown>): Record<string, unknown> {
  const { method, path, status, ms, requestId: _requestId, ...rest } = line;
  if (line.msg !== 'request' || typeof method !== 'string' || typeof path !== 'string') return line;
  return { ...rest, msg: `${method} ${path} ${String(status)} ${String(ms)}ms` };
}

/**
 * Readable lines for a person at a terminal (`logFormat` auto or pretty), written synchronously:
 * development only needs them legible, not fast. JSON everywhere else.
 */
function destination(format: Config['logFormat'], fd: 1 | 2): DestinationStream {
  const terminal = (fd === 1 ? process.stdout : process.stderr).isTTY;
  if (format === 'json' || (format === 'auto' && !terminal)) return pino.destination(fd);
  const prettify = pretty.prettyFactory({ colorize: terminal, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,service' });
  return {
    write(json: string) {
      writeSync(fd, prettify(readableAccessLine(JSON.parse(json) as Record<string, unknown>)));
    },
  };
}

/**
 * Structured logs, on stdout for the server; command-line tools pass fd 2 so their stdout
 * stays clean for results. Secrets never reach the logs (see the redact list), nor do the
 * values of failed statements (serializeError: database errors as codes, not SQL).
 */
export function createLogger(config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'logFormat'>>, fd: 1 | 2 = 1): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { service: 'palaver' },
      serializers: { err: serializeError },
      redact: {
        paths: ['req.headers.authorization', 'password', 'token', 'apiKey', 'signingSecret'],
        censor: '[redacted]',
      },
    },
    destination(config.logFormat ?? 'auto', fd),
  );
}

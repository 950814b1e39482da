// `npm start`: read the configuration, serve, and stop cleanly on SIGTERM or SIGINT.
import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './logger.ts';

let config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}

const logger = createLogger(config);
// Said before the rest of the server is loaded (seconds, under tsx), so that a start is never silent.
logger.info({ env: config.env, port: config.port }, `starting Palaver (NODE_ENV ${config.env}, port ${config.port})`);
const { DataDirInUseError } = await import('./db/data-dir-lock.ts');
const { DatabaseUnreachableError } = await import('./db/orm.ts');
const { PortInUseError, startServer } = await import('./server.ts');
const { demoBanner } = await import('./setup/bootstrap.ts');

// The handlers are there before the server is, so that no signal falls in the moment between the
// start's last line (the demo banner) and their installation, where Node's default would end the
// process without closing the server. A signal before the server is up ends the start at once, as
// the default would.
let server: Awaited<ReturnType<typeof startServer>> | undefined;
let stopping = false;
const stop = (signal: NodeJS.Signals) => {
  if (!server) {
    logger.warn({ signal }, 'signal during start: exiting at once');
    process.exit(1);
  }
  if (stopping) {
    logger.warn({ signal }, 'second signal: exiting at once');
    process.exit(1);
  }
  stopping = true;
  logger.info({ signal }, 'shutting down');
  server.close().then(
    () => process.exit(0),
    (err: unknown) => {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

try {
  server = await startServer(config, logger);
  if (server.demo) process.stdout.write(`${demoBanner(server.demo, server.url, config.dataDir)}\n`);
} catch (err) {
  if (err instanceof DataDirInUseError || err instanceof PortInUseError || err instanceof DatabaseUnreachableError) {
    logger.fatal(err.message);
  } else {
    logger.fatal({ err }, 'start failed');
  }
  process.exit(1);
}

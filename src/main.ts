// `npm start`: read the configuration, serve, and stop cleanly on SIGTERM or SIGINT.
import { ConfigError, loadConfig } from './config.ts';
import { DataDirInUseError } from './db/data-dir-lock.ts';
import { createLogger } from './logger.ts';
import { startServer } from './server.ts';
import { demoBanner } from './setup/bootstrap.ts';

let config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}

const logger = createLogger(config);
try {
  const server = await startServer(config, logger);
  if (server.demo) process.stdout.write(`${demoBanner(server.demo, server.url)}\n`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
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
} catch (err) {
  if (err instanceof DataDirInUseError) {
    logger.fatal(err.message);
  } else {
    logger.fatal({ err }, 'start failed');
  }
  process.exit(1);
}

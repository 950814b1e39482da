// `npm run dev`: the server restarted on every change of its sources (tsx watch), and the
// browser bundles rebuilt on every change of theirs (esbuild watch), in one terminal.
import { spawn } from 'node:child_process';
import { watchWeb } from './build-web.ts';

const stopWeb = await watchWeb();
const server = spawn(process.execPath, ['--import', 'tsx', '--watch-path=src', '--watch-path=config', 'src/main.ts'], {
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'development' },
});

const stop = (signal: NodeJS.Signals) => {
  server.kill(signal);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
server.on('exit', (code) => {
  void stopWeb().then(() => process.exit(code ?? 0));
});

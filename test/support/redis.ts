// A Redis of a test's own (redis-server on a free port), so that the test can stop it, kill it
// and start it again; and an admin connection to cut subscribers off while publishers stay.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A Redis of this test's own, so that it can be stopped and started. */
export class TestRedis {
  private process: ChildProcess | undefined;
  /** One connection kept open: it still works while new connections are refused (maxclients). */
  private adminClient: Redis | undefined;
  constructor(readonly port: number) {}

  admin(): Redis {
    if (!this.adminClient) {
      this.adminClient = new Redis(this.url, { maxRetriesPerRequest: 1 });
      this.adminClient.on('error', () => undefined);
    }
    return this.adminClient;
  }

  /** The connections that are subscribed (one Socket.IO adapter subscriber per node). */
  async subscribers(): Promise<number> {
    const list = String(await this.admin().call('CLIENT', 'LIST', 'TYPE', 'pubsub')).trim();
    return list === '' ? 0 : list.split('\n').length;
  }

  /**
   * Cuts every subscriber off and keeps them off (new connections are refused while the others
   * stay): what the nodes publish meanwhile reaches no node, as during an outage, but without
   * the publishers' connections going down.
   */
  async cutSubscribers(): Promise<number> {
    const clients = String(await this.admin().call('CLIENT', 'LIST'))
      .trim()
      .split('\n').length;
    const subscribers = await this.subscribers();
    await this.admin().call('CONFIG', 'SET', 'maxclients', String(clients - subscribers));
    return Number(await this.admin().call('CLIENT', 'KILL', 'TYPE', 'pubsub'));
  }

  async admitClients(): Promise<void> {
    await this.admin().call('CONFIG', 'SET', 'maxclients', '10000');
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.process = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 100; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const probe = spawn('redis-cli', ['-p', String(this.port), 'ping'], { stdio: 'ignore' });
        probe.on('exit', (code) => resolve(code === 0));
      });
      if (up) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not start');
  }

  async stop(): Promise<void> {
    const client = this.adminClient;
    this.adminClient = undefined;
    client?.disconnect();
    const proc = this.process;
    // Killed before (exitCode stays null after a signal) or never started: nothing to wait for.
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  }
}

// Every failed delivery attempt is one warning: while it will be retried it says when (in its
// message too, which is what a terminal shows), and when the delivery dies it says so; with the Service, the delivery, the attempt's number, status
// and error, and no stack. Read from the shared server's logger (test config: 3 attempts).
import { expect } from 'chai';
import { createAccount, createService } from './support/factories.ts';
import { freePort } from './support/redis.ts';
import { sharedServer } from './support/server.ts';
import { Widget } from './support/widget.ts';

type Line = Record<string, unknown> & { level: 'info' | 'warn'; msg: string };

describe('delivery attempt logs', function () {
  this.timeout(30_000);
  let lines: Line[];
  let restore: () => void;

  beforeEach(() => {
    const logger = sharedServer().deps.logger;
    const { info, warn } = logger;
    lines = [];
    const capture = (level: Line['level']) => (fields: object, msg: string) => void lines.push({ ...fields, level, msg });
    Object.assign(logger, { info: capture('info'), warn: capture('warn') });
    restore = () => Object.assign(logger, { info, warn });
  });
  afterEach(() => restore());

  it('logs each failed attempt of a webhook to a Service that is down, then its death', async () => {
    // Nothing listens there: every attempt is refused (ECONNREFUSED).
    const account = await createAccount();
    const service = await createService(account.id, { name: 'Down', webhookUrl: `http://127.0.0.1:${await freePort()}/hook` });
    const widget = new Widget({ ...account, defaultServiceId: service.id });
    await widget.register();
    await widget.send('anyone there?');

    const ofService = () => lines.filter((l) => l.serviceId === service.id);
    const deadline = Date.now() + 20_000;
    while (!ofService().some((l) => l.msg.endsWith('delivery dead'))) {
      if (Date.now() > deadline) throw new Error(`no dead delivery logged: ${JSON.stringify(ofService())}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const dead = ofService().find((l) => l.msg.endsWith('delivery dead'));
    const attempts = ofService().filter((l) => l.deliveryId === dead?.deliveryId);
    expect(attempts.map((l) => [l.level, l.attempt, l.msg.replace(/in \d+ s, at \S+$/, 'in <n> s, at <time>')])).to.deep.equal([
      ['warn', 1, 'webhook attempt failed; will retry in <n> s, at <time>'],
      ['warn', 2, 'webhook attempt failed; will retry in <n> s, at <time>'],
      ['warn', 3, 'webhook attempt failed; delivery dead'],
    ]);
    expect(attempts[0]?.msg.endsWith(`at ${String(attempts[0]?.nextAttemptAt)}`), 'the message names the next attempt').to.equal(true);
    for (const line of attempts) {
      expect(line).to.include({ serviceId: service.id, status: null });
      expect(line.error)
        .to.be.a('string')
        .and.match(/ECONNREFUSED/);
      expect(line).not.to.have.property('err');
    }
    expect(new Date(String(attempts[0]?.nextAttemptAt)).getTime(), 'next attempt time').to.be.a('number').and.not.NaN;
    expect(attempts[2]).not.to.have.property('nextAttemptAt');
  });
});

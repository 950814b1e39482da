import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../src/config.ts';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('reads config/default.json, then the environment file, then variables', () => {
    const dev = loadConfig({ env: { NODE_ENV: 'development' } });
    expect(dev.port).to.equal(3000);
    expect(dev.webhooks.allowPrivate).to.equal(true);
    expect(dev.webhooks.retrySchedule).to.deep.equal([0, 5, 300, 1800, 7200, 18000, 36000, 36000]);

    const prod = loadConfig({
      env: {
        NODE_ENV: 'production',
        PORT: '8080',
        PALAVER_WEBHOOK_ALLOW_PRIVATE: 'true',
        PALAVER_RETRY_SCHEDULE: '0, 2,3',
        DATABASE_URL: 'postgresql://u@db:5432/palaver',
      },
    });
    expect(prod.port).to.equal(8080);
    expect(prod.demo).to.equal(false);
    expect(prod.webhooks.allowPrivate).to.equal(true);
    expect(prod.webhooks.retrySchedule).to.deep.equal([0, 2, 3]);
    expect(prod.databaseUrl).to.equal('postgresql://u@db:5432/palaver');
  });

  it('leaves email off without an SMTP host, and reads its settings from variables', () => {
    const off = loadConfig({ env: { NODE_ENV: 'production' } });
    expect(off.email).to.deep.equal({ unseenAfterSeconds: 120, linkTtlSeconds: 604800 });

    const on = loadConfig({
      env: {
        NODE_ENV: 'production',
        PALAVER_SMTP_HOST: 'smtp.example.com',
        PALAVER_SMTP_PORT: '465',
        PALAVER_SMTP_SECURE: 'true',
        PALAVER_SMTP_USER: 'palaver',
        PALAVER_SMTP_PASSWORD: 'secret',
        PALAVER_SMTP_FROM: 'Support <support@example.com>',
        PALAVER_PUBLIC_URL: 'https://chat.example.com',
        PALAVER_EMAIL_LINK_SECRET: 'x'.repeat(32),
        PALAVER_EMAIL_UNSEEN_AFTER_SECONDS: '300',
      },
    });
    expect(on.email.unseenAfterSeconds).to.equal(300);
    expect(on.email.smtp).to.deep.equal({
      host: 'smtp.example.com',
      port: 465,
      secure: true,
      requireTls: false,
      user: 'palaver',
      password: 'secret',
      from: 'Support <support@example.com>',
      timeoutMs: 30000,
    });

    // The links of emails need the public address and a secret.
    const missing = configError(() =>
      loadConfig({ env: { NODE_ENV: 'production', PALAVER_SMTP_HOST: 'smtp.example.com', PALAVER_SMTP_FROM: 'a@example.com' } }),
    );
    expect(missing.problems.join('\n')).to.contain('email.smtp needs email.publicUrl and email.linkSecret');
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ env: { NODE_ENV: 'development', DATABASE_URL: '' } }).databaseUrl).to.equal(undefined);
  });

  it('names every wrong value, by its variable, in one error', () => {
    const err = configError(() =>
      loadConfig({
        env: {
          NODE_ENV: 'development',
          PORT: 'eighty',
          DATABASE_URL: 'mysql://x@y/z',
          PALAVER_RETRY_SCHEDULE: '5,soon',
          PALAVER_WEBHOOK_ALLOW_PRIVATE: 'maybe',
          LOG_LEVEL: 'loud',
        },
      }),
    );
    const text = err.message;
    for (const name of ['PORT', 'DATABASE_URL', 'PALAVER_RETRY_SCHEDULE', 'PALAVER_WEBHOOK_ALLOW_PRIVATE', 'LOG_LEVEL']) {
      expect(text).to.contain(name);
    }
    expect(err.problems).to.have.length(5);
  });

  it('reports a config file that is not valid JSON', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'palaver-config-'));
    writeFileSync(path.join(dir, 'default.json'), '{ "port": ');
    const err = configError(() => loadConfig({ env: { NODE_ENV: 'x' }, configDir: dir }));
    expect(err.message).to.contain('default.json');
  });
});

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

  it('keeps the production password hash cost at the default or above, and lets the tests go lower', () => {
    expect(loadConfig({ env: { NODE_ENV: 'production' } }).security.passwordHashCost).to.equal(15);
    expect(loadConfig({ env: { NODE_ENV: 'test' } }).security.passwordHashCost).to.equal(10);
    expect(loadConfig({ env: { NODE_ENV: 'production', PALAVER_PASSWORD_HASH_COST: '16' } }).security.passwordHashCost).to.equal(16);
    expect(() => loadConfig({ env: { NODE_ENV: 'production', PALAVER_PASSWORD_HASH_COST: '12' } }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.deep.equals(['PALAVER_PASSWORD_HASH_COST (security.passwordHashCost): must be at least 15 in production']);
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

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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
    expect(dev.webhooks.retrySchedule).to.deep.equal([0, 2, 5, 15, 60, 300, 1800, 7200]);

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

  it('leaves email off without an SMTP host, and reads its settings from variables', () => {
    const off = loadConfig({ env: { NODE_ENV: 'production' } });
    expect(off.email).to.deep.equal({
      unseenAfterSeconds: 120,
      linkTtlSeconds: 604800,
      transcriptRateLimit: { points: 3, durationSeconds: 3600 },
      inbound: {
        maxBytes: 10485760,
        rateLimit: { points: 20, durationSeconds: 3600 },
        smtp: { enabled: false, host: '0.0.0.0', port: 2525 },
      },
    });

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
    expect(missing.problems.join('\n')).to.contain('email.smtp needs publicUrl (PALAVER_PUBLIC_URL) and email.linkSecret');
  });

  it('leaves replies by email off by default, reads their settings from variables, and needs the domain and secret', () => {
    const on = loadConfig({
      env: {
        NODE_ENV: 'production',
        PALAVER_EMAIL_INBOUND_DOMAIN: 'reply.example.com',
        PALAVER_EMAIL_INBOUND_SECRET: 's'.repeat(32),
        PALAVER_EMAIL_INBOUND_PREVIOUS_SECRET: 'p'.repeat(32),
        PALAVER_EMAIL_INBOUND_MAX_BYTES: '5000000',
        PALAVER_EMAIL_INBOUND_SMTP: 'true',
        PALAVER_EMAIL_INBOUND_SMTP_HOST: '127.0.0.1',
        PALAVER_EMAIL_INBOUND_SMTP_PORT: '25',
        PALAVER_EMAIL_INBOUND_SMTP_TLS_KEY_FILE: '/etc/palaver/key.pem',
        PALAVER_EMAIL_INBOUND_SMTP_TLS_CERT_FILE: '/etc/palaver/cert.pem',
        PALAVER_EMAIL_INBOUND_WEBHOOK_SECRET: 'w'.repeat(32),
      },
    });
    expect(on.email.inbound).to.deep.equal({
      domain: 'reply.example.com',
      secret: 's'.repeat(32),
      previousSecret: 'p'.repeat(32),
      maxBytes: 5000000,
      rateLimit: { points: 20, durationSeconds: 3600 },
      smtp: { enabled: true, host: '127.0.0.1', port: 25, tlsKeyFile: '/etc/palaver/key.pem', tlsCertFile: '/etc/palaver/cert.pem' },
      webhookSecret: 'w'.repeat(32),
    });
    const missing = configError(() => loadConfig({ env: { NODE_ENV: 'production', PALAVER_EMAIL_INBOUND_SMTP: 'true' } }));
    expect(missing.problems.join('\n')).to.contain(
      'replies by email need email.inbound.domain (PALAVER_EMAIL_INBOUND_DOMAIN) and email.inbound.secret (PALAVER_EMAIL_INBOUND_SECRET)',
    );
    const short = configError(() =>
      loadConfig({
        env: { NODE_ENV: 'production', PALAVER_EMAIL_INBOUND_DOMAIN: 'reply.example.com', PALAVER_EMAIL_INBOUND_SECRET: 'short' },
      }),
    );
    expect(short.problems.join('\n')).to.contain('PALAVER_EMAIL_INBOUND_SECRET (email.inbound.secret): must be at least 32 characters');
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

  describe('single sign-on (sso)', () => {
    const oidcEnv = {
      NODE_ENV: 'production',
      PALAVER_SSO_ISSUER: 'https://id.example.com/realms/staff',
      PALAVER_SSO_CLIENT_ID: 'palaver',
      PALAVER_SSO_CLIENT_SECRET: 'a secret of sixteen or more',
      PALAVER_PUBLIC_URL: 'https://chat.example.com/',
    };

    it('is off by default, with password sign-in on', () => {
      const config = loadConfig({ env: { NODE_ENV: 'production' } });
      expect(config.sso).to.deep.equal({ passwordSignIn: true });
    });

    it('reads the provider from variables, with defaults for the rest', () => {
      const config = loadConfig({ env: oidcEnv });
      expect(config.publicUrl).to.equal('https://chat.example.com');
      expect(config.sso.oidc).to.deep.equal({
        issuer: 'https://id.example.com/realms/staff',
        clientId: 'palaver',
        clientSecret: 'a secret of sixteen or more',
        scopes: ['openid', 'email'],
        name: 'single sign-on',
        createOperators: false,
      });
    });

    it('reads scopes, the name, the grants of created operators and password sign-in off', () => {
      const config = loadConfig({
        env: {
          ...oidcEnv,
          PALAVER_SSO_SCOPES: 'openid email profile',
          PALAVER_SSO_NAME: 'Acme ID',
          PALAVER_SSO_CREATE_OPERATORS: 'conversations:read@3, accounts:read@*',
          PALAVER_PASSWORD_SIGN_IN: 'false',
        },
      });
      expect(config.sso.passwordSignIn).to.equal(false);
      expect(config.sso.oidc?.scopes).to.deep.equal(['openid', 'email', 'profile']);
      expect(config.sso.oidc?.name).to.equal('Acme ID');
      expect(config.sso.oidc?.createOperators).to.deep.equal([
        { permission: 'conversations:read', accountId: 3 },
        { permission: 'accounts:read', accountId: null },
      ]);
      expect(loadConfig({ env: { ...oidcEnv, PALAVER_SSO_CREATE_OPERATORS: 'off' } }).sso.oidc?.createOperators).to.equal(false);
      expect(
        loadConfig({
          overrides: {
            publicUrl: 'https://chat.example.com',
            sso: { oidc: { ...loadConfig({ env: oidcEnv }).sso.oidc, createOperators: [] } },
          },
        }).sso.oidc?.createOperators,
      ).to.deep.equal([]);
    });

    it('names every wrong SSO setting by its variable', () => {
      const err = configError(() =>
        loadConfig({
          env: {
            NODE_ENV: 'production',
            PALAVER_SSO_ISSUER: 'http://id.example.com',
            PALAVER_SSO_CLIENT_SECRET: 'short',
            PALAVER_PUBLIC_URL: 'chat.example.com',
            PALAVER_SSO_SCOPES: 'openid profile',
            PALAVER_SSO_CREATE_OPERATORS: 'conversations:read@3,reading@*,accounts:read',
          },
        }),
      );
      const text = err.problems.join('\n');
      expect(text).to.include('PALAVER_SSO_ISSUER (sso.oidc.issuer): must be an https:// URL');
      expect(text).to.include('PALAVER_SSO_CLIENT_ID (sso.oidc.clientId)');
      expect(text).to.include('PALAVER_SSO_CLIENT_SECRET (sso.oidc.clientSecret): must be at least 16 characters');
      expect(text).to.include('PALAVER_PUBLIC_URL (publicUrl)');
      expect(text).to.include('PALAVER_SSO_SCOPES (sso.oidc.scopes): must include openid and email');
      expect(text).to.include('sso.oidc.createOperators.1: names no permission');
      expect(text).to.include('sso.oidc.createOperators.2: must look like conversations:read@3');
    });

    it('refuses password sign-in off without a provider: nobody could sign in', () => {
      const err = configError(() => loadConfig({ env: { NODE_ENV: 'production', PALAVER_PASSWORD_SIGN_IN: 'false' } }));
      expect(err.problems).to.deep.equal([
        'PALAVER_PASSWORD_SIGN_IN (sso.passwordSignIn): can be false only with sso.oidc configured (nobody could sign in)',
      ]);
    });

    it('needs the top-level publicUrl (PALAVER_PUBLIC_URL) with a provider: the redirect URI is made from it', () => {
      const err = configError(() => loadConfig({ env: { ...oidcEnv, PALAVER_PUBLIC_URL: undefined } }));
      expect(err.problems).to.deep.equal([
        'PALAVER_PUBLIC_URL (publicUrl): is required with sso.oidc (the redirect URI is <publicUrl>/adminApi/sso/callback)',
      ]);
      // The setting of the SSO branch before the merge is gone: one address for reset links and SSO.
      expect(loadConfig({ env: { ...oidcEnv, PALAVER_SSO_PUBLIC_URL: 'https://other.example.com' } }).publicUrl).to.equal(
        'https://chat.example.com',
      );
    });
  });

  it('docker-compose.yml: its nodes’ settings are valid in production, and its comments say where to sign in and how a bot on its network is reached', () => {
    const root = path.resolve(import.meta.dirname, '..');
    const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    const operations = readFileSync(path.join(root, 'docs', 'operations.md'), 'utf8');
    // `/` is 404 in production: the way in is the dashboard, as the operator the compose file names.
    expect(compose).to.contain('http://localhost:8080/dashboard');
    expect(compose).to.not.match(/localhost:8080\.?$/m);
    const operator = /PALAVER_ADMIN_EMAIL: \$\{PALAVER_ADMIN_EMAIL:-([^}]+)\}/.exec(compose)?.[1];
    expect(operator).to.equal('admin@example.com');
    expect(operations).to.contain(`\`${operator}\``).and.to.contain('http://localhost:8080/dashboard');
    // The key that lets webhooks reach a bot on the compose network is a real one.
    expect(compose).to.match(/# PALAVER_WEBHOOK_ALLOW_PRIVATE: 'true'/);
    const env = {
      NODE_ENV: 'production',
      DATABASE_URL: /DATABASE_URL: (\S+)/.exec(compose)?.[1],
      REDIS_URL: /REDIS_URL: (\S+)/.exec(compose)?.[1],
      PALAVER_TRUSTED_PROXIES: /PALAVER_TRUSTED_PROXIES: (\S+)/.exec(compose)?.[1],
      PALAVER_ADMIN_EMAIL: operator,
      PALAVER_ADMIN_PASSWORD: 'a long password',
      PALAVER_WEBHOOK_ALLOW_PRIVATE: 'true',
    };
    const config = loadConfig({ env });
    expect(config.webhooks.allowPrivate).to.equal(true);
    expect(config.demoPage.enabled, '/ is 404').to.equal(false);
    expect(loadConfig({ env: { ...env, PALAVER_WEBHOOK_ALLOW_PRIVATE: undefined } }).webhooks.allowPrivate).to.equal(false);
  });
});

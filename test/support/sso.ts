// A Palaver with single sign-on to a loopback OpenID provider (test/support/oidc-provider.ts),
// each on its own port: the provider must know Palaver's redirect URI, Palaver its issuer.
import { freePort, startOidcProvider, type LoopbackProvider } from './oidc-provider.ts';
import { startTestServer, type TestServer } from './server.ts';

export const SSO_NAME = 'Loopback ID';

export interface SsoSetup {
  provider: LoopbackProvider;
  server: TestServer;
  stop(): Promise<void>;
}

export async function startSsoServer(sso: { createOperators?: false | string[]; passwordSignIn?: boolean } = {}): Promise<SsoSetup> {
  const provider = await startOidcProvider();
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const server = await startTestServer({
    port,
    publicUrl,
    sso: {
      passwordSignIn: sso.passwordSignIn ?? true,
      oidc: {
        issuer: provider.issuer,
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        name: SSO_NAME,
        createOperators: sso.createOperators ?? false,
      },
    },
  }).catch(async (err: unknown) => {
    await provider.close();
    throw err;
  });
  provider.configure(`${publicUrl}/adminApi/sso/callback`);
  return {
    provider,
    server,
    async stop() {
      await server.stop();
      await provider.close();
    },
  };
}

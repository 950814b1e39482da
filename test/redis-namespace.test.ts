// What Palaver keeps in Redis is namespaced by the database (limitsNamespace): rate-limit counts
// and Socket.IO's channels are about record ids, and ids mean something only within one
// database. Two databases sharing a Redis (two deployments, or the test databases of two runs or
// of two parallel test workers) must neither count against each other nor hear each other.
import { expect } from 'chai';
import { limitsNamespace } from '../src/limits.ts';
import { mode } from './support/database.ts';
import { sharedServer, startTestServer, type TestServer } from './support/server.ts';
import { WidgetSocket } from './support/sockets.ts';
import { tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

describe('rate-limit keys in Redis', () => {
  it('are namespaced by the database, so databases sharing a Redis never share counts', () => {
    expect(limitsNamespace('postgresql://palaver:secret@db:5432/palaver')).to.equal('palaver:palaver');
    expect(limitsNamespace('postgresql://postgres@127.0.0.1:5432/test_abc')).to.equal('palaver:test_abc');
    expect(limitsNamespace('postgresql://postgres@127.0.0.1:5432/test_abc')).not.to.equal(
      limitsNamespace('postgresql://postgres@127.0.0.1:5432/test_def'),
    );
    expect(limitsNamespace(undefined)).to.equal('palaver:embedded');
  });
});

const NEEDS = 'needs TEST_DATABASE_URL and TEST_REDIS_URL (PostgreSQL and Redis)';
const runs = mode === 'postgresql' && Boolean(process.env.TEST_REDIS_URL);

(runs ? describe : describe.skip)(`Socket.IO channels in Redis${runs ? '' : ` (skipped: ${NEEDS})`}`, function () {
  this.timeout(60_000);
  let other: TestServer | undefined;

  before(async () => {
    // A node of another database on the same Redis as the shared server.
    other = await startTestServer();
  });

  after(async () => {
    await other?.stop();
  });

  it("are namespaced by the database: a node of another database does not answer for this one's sockets", async () => {
    const { account, receiver } = await tenant();
    const widget = new Widget(account);
    const registered = await widget.register();
    expect(registered.status, registered.text).to.equal(200);
    const { userId } = registered.body.data;
    const socket = new WidgetSocket(widget);
    try {
      await socket.connected();
      expect(await sharedServer().deps.realtime.isConnected(userId), 'asked of its own node').to.equal(true);
      // The same user id in the other database is another customer, who has no socket anywhere.
      expect(await other!.deps.realtime.isConnected(userId), 'asked of a node of another database').to.equal(false);
    } finally {
      socket.socket.close();
      await receiver.close();
    }
  });
});

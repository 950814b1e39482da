// A user erased (GDPR) while their widget is open: their sockets are told `unauthorized`
// `device_not_found` and disconnected, other users' sockets stay, and whatever the erased
// device still sends is the caller's 404, never a logged failure of ours.
import { expect } from 'chai';
import { sendClientMessage } from '../src/commands/client/send-message.ts';
import { openConversation } from '../src/api/client/caller.ts';
import { AppError } from '../src/errors.ts';
import { adminToken } from './support/factories.ts';
import { client } from './support/http.ts';
import { sharedServer } from './support/server.ts';
import { WidgetSocket } from './support/sockets.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

describe('real-time gateway: erasure', function () {
  this.timeout(60_000);
  let t: Tenant;
  const sockets: WidgetSocket[] = [];
  /** What the server logged at error level (or above) during the test. */
  let errors: unknown[];
  let restoreLogger: () => void;

  const open = async (widget: Widget) => {
    const socket = new WidgetSocket(widget);
    sockets.push(socket);
    await socket.connected();
    return socket;
  };
  const erase = async (userId: number) => {
    const answer = await client(sharedServer().url).delete(`/adminApi/accounts/${t.account.id}/users/${userId}`, {
      token: await adminToken(),
    });
    expect(answer.status, 'erased').to.equal(200);
  };
  const disconnected = (socket: WidgetSocket) =>
    new Promise<string>((resolve) => {
      if (!socket.socket.connected) resolve('already');
      else socket.socket.once('disconnect', resolve);
    });

  beforeEach(async () => {
    t = await tenant();
    // The shared server's logger, watched for error lines (the gateway logs through the same one).
    const logger = sharedServer().deps.logger;
    const { error, fatal } = logger;
    errors = [];
    logger.error = (...args: unknown[]) => void errors.push(args);
    logger.fatal = (...args: unknown[]) => void errors.push(args);
    restoreLogger = () => Object.assign(logger, { error, fatal });
  });
  afterEach(async () => {
    restoreLogger();
    for (const socket of sockets.splice(0)) socket.close();
    await t.receiver.close();
  });

  it("tells the erased user's sockets device_not_found and disconnects them; another user's socket stays", async () => {
    const widget = new Widget(t.account);
    const userId = (await widget.register()).body.data.userId;
    await widget.send('before the erasure');
    const first = await open(widget);
    const second = await open(widget);
    const other = new Widget(t.account);
    await other.register();
    const bystander = await open(other);
    // A socket that sent before keeps its caller: it must still be cut.
    expect((await first.emit('message', { message: 'kept caller' })).data).to.have.property('messageId');

    const gone = [disconnected(first), disconnected(second)];
    await erase(userId);
    expect(await Promise.all(gone)).to.deep.equal(['io server disconnect', 'io server disconnect']);
    for (const socket of [first, second]) expect(socket.events('unauthorized')).to.deep.equal([{ code: 'device_not_found' }]);

    await bystander.roundTrip();
    expect(bystander.socket.connected, "the other user's socket").to.equal(true);
    expect(bystander.events('unauthorized')).to.deep.equal([]);

    const rest = await widget.send('after the erasure');
    expect(rest.status).to.equal(404);
    expect(rest.body.notifications[0]?.message).to.equal('device_not_found');
    const again = new WidgetSocket(widget);
    sockets.push(again);
    const refused = await again.connected().then(
      () => null,
      (err: Error) => err.message,
    );
    expect(refused, 'a new handshake of the erased device').to.equal('device_not_found');
    expect(errors, 'error lines logged').to.deep.equal([]);
  });

  it('answers a message read as the erased user just before the erasure with 404 user_not_found', async () => {
    const widget = new Widget(t.account);
    const userId = (await widget.register()).body.data.userId;
    const { deps } = sharedServer();
    // The snapshot an event in flight holds (a socket's kept caller) when the erasure commits.
    const conversation = openConversation(
      await deps.callers.identify({
        identification: widget.headers()['x-iris-identification'],
        authorization: undefined,
        origin: undefined,
      }),
    );
    await erase(userId);
    const refused = await sendClientMessage(deps.messages, conversation, { message: 'too late' }, undefined).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).to.be.instanceOf(AppError);
    expect(refused).to.include({ status: 404, code: 'user_not_found' });
    expect(errors, 'error lines logged').to.deep.equal([]);
  });
});

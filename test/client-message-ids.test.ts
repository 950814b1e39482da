// A client's own message ids (`clientMessageId`): a message sent again with the id it was sent
// with, over REST or a socket, however close together, is written, delivered and pushed once,
// and every send is answered with the one message's id. This is what lets the widget retry
// whenever it did not hear an answer.
import { expect } from 'chai';
import { expectOutbox } from './support/outbox.ts';
import { WidgetSocket } from './support/sockets.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

describe('Client API: client message ids', function () {
  this.timeout(30_000);
  let t: Tenant;
  let widget: Widget;
  let userId: number;
  const sockets: WidgetSocket[] = [];

  beforeEach(async () => {
    t = await tenant();
    widget = new Widget(t.account);
    userId = (await widget.register()).body.data.userId;
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await t.receiver.close();
  });

  const stored = async () => (await widget.messages()).body.data.map((m) => [m.id, m.message]);

  it('answers a repeated REST send with the first message and writes nothing more', async () => {
    const first = await widget.send({ message: 'Where is my parcel?', clientMessageId: 'retry-key-0001' });
    const again = await widget.send({ message: 'Where is my parcel?', clientMessageId: 'retry-key-0001' });
    expect(first.status).to.equal(200);
    expect(again.status).to.equal(200);
    expect(again.body.data.messageId).to.equal(first.body.data.messageId);
    // user_registered is not sent for anonymous users: the one message is the only delivery.
    await expectOutbox({ serviceId: t.service.id, userId }, 1, 'message deliveries');
    expect(await stored()).to.deep.equal([[Number(first.body.data.messageId), 'Where is my parcel?']]);
  });

  it('writes one message when the same id is sent at once over a socket and REST', async () => {
    const socket = new WidgetSocket(widget);
    sockets.push(socket);
    await socket.connected();
    const body = { message: 'Hello twice', clientMessageId: 'at-once-000000001' };
    const answers = await Promise.all([
      socket.emit('message', body),
      socket.emit('message', body),
      widget.send(body).then((a) => a.body),
      socket.emit('message', body),
    ]);
    const ids = answers.map((a) => (a.data as { messageId?: string }).messageId);
    expect(new Set(ids).size, `answers ${JSON.stringify(ids)}`).to.equal(1);
    expect(ids[0]).to.match(/^\d+$/);
    await expectOutbox({ serviceId: t.service.id, userId }, 1, 'message deliveries');
    expect(await stored()).to.have.length(1);
  });

  it('keeps ids apart per device and writes messages without one as before', async () => {
    const other = new Widget(t.account);
    const otherUser = (await other.register()).body.data.userId;
    const a = await widget.send({ message: 'one', clientMessageId: 'shared-key-0001' });
    const b = await other.send({ message: 'one', clientMessageId: 'shared-key-0001' });
    expect(b.body.data.messageId).to.not.equal(a.body.data.messageId);
    await widget.send('plain');
    await widget.send('plain');
    await expectOutbox({ serviceId: t.service.id, userId }, 3, 'message deliveries');
    await expectOutbox({ serviceId: t.service.id, userId: otherUser }, 1, 'message deliveries of the other device');
  });

  it('tells other sockets of the conversation once', async () => {
    const watcher = new Widget(t.account);
    await watcher.register();
    // A second device of the same anonymous conversation cannot exist; a registered user's can.
    const registered = new Widget(t.account).signIn('customer-ids-1');
    await registered.register();
    const phone = new Widget(t.account, undefined, registered.authorization);
    await phone.register();
    const socket = new WidgetSocket(phone);
    sockets.push(socket);
    await socket.connected();
    const body = { message: 'from the laptop', clientMessageId: 'laptop-msg-00001' };
    await registered.send(body);
    await registered.send(body);
    const pushed = await socket.waitForExactly('message', 1);
    expect(pushed[0]?.message).to.equal('from the laptop');
  });

  it('refuses an id that is not 8 to 64 letters, digits, - or _ (422 naming the field)', async () => {
    for (const clientMessageId of ['short', 'x'.repeat(65), 'has space 123', 42]) {
      const answer = await widget.send({ message: 'hi', clientMessageId });
      expect(answer.status, JSON.stringify(clientMessageId)).to.equal(422);
      expect(JSON.stringify(answer.body)).to.contain('clientMessageId');
    }
    await expectOutbox({ serviceId: t.service.id, userId }, 0, 'nothing written');
  });
});

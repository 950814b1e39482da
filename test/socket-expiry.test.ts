// A socket lives no longer than the authorization it was opened with: when the registered
// user's header passes its validUntil, the socket hears `unauthorized` and is disconnected.
import { expect } from 'chai';
import { WidgetSocket } from './support/sockets.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget, authFor } from './support/widget.ts';

describe('real-time gateway: expired authorization', function () {
  this.timeout(30_000);
  let t: Tenant;
  const sockets: WidgetSocket[] = [];

  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await t.receiver.close();
  });

  it('disconnects a socket when its header expires, with an unauthorized event first; others stay', async function () {
    // Up to four windows of 2, 4, 8 and 16 s, and the wait for each.
    this.timeout(120_000);
    const lasting = new Widget(t.account, undefined, authFor(t.account, 'lasting-customer'));
    expect((await lasting.register()).status).to.equal(200);
    const anonymous = new Widget(t.account);
    expect((await anonymous.register()).status).to.equal(200);
    const others = [new WidgetSocket(lasting), new WidgetSocket(anonymous)];
    sockets.push(...others);
    await Promise.all(others.map((s) => s.connected()));

    // The header must still be valid when its socket is let in: valid through the second after
    // next, or, where a loaded machine took longer than that to register and connect (the
    // handshake refused as expired), through a window twice as long.
    let validUntil = 0;
    let shortLived: Widget | undefined;
    let expiring: WidgetSocket | undefined;
    for (let window = 2; !expiring; window *= 2) {
      expect(window, 'a socket let in before its header expired').to.be.at.most(16);
      validUntil = Math.floor(Date.now() / 1000) + window;
      shortLived = new Widget(t.account, undefined, authFor(t.account, 'expiring-customer', validUntil));
      if ((await shortLived.register()).status !== 200) continue;
      const socket = new WidgetSocket(shortLived);
      sockets.push(socket);
      const refused = await socket.connected().then(
        () => null,
        (err: Error) => err.message,
      );
      if (refused === null) expiring = socket;
      else expect(refused).to.equal('authorization_expired');
    }

    // The server ends it when the header expires; nothing else ends this wait (the test's budget).
    const reason = await new Promise<string>((resolve) => expiring.socket.once('disconnect', resolve));
    expect(reason, 'the server ended it: the client does not reconnect on its own').to.equal('io server disconnect');
    expect(Date.now(), 'not before validUntil').to.be.greaterThan(validUntil * 1000);
    expect(expiring.events('unauthorized')).to.deep.equal([{ code: 'authorization_expired' }]);

    // The same header is refused at the handshake now, as over REST.
    const again = new WidgetSocket(shortLived!);
    sockets.push(again);
    const refused = await again.connected().then(
      () => null,
      (err: Error) => err.message,
    );
    expect(refused).to.equal('authorization_expired');

    for (const socket of others) {
      expect(socket.socket.connected).to.equal(true);
      expect(socket.events('unauthorized')).to.deep.equal([]);
      const ack = await socket.emit('startTyping');
      expect(ack.status).to.equal('SUCCESS');
    }
  });

  it('a socket moved at a merge is bound to its header’s validUntil; one with the device id alone is disconnected at the merge', async () => {
    // Far enough ahead for the merge to come first on a busy machine.
    const validUntil = Math.floor(Date.now() / 1000) + 5;
    const widget = new Widget(t.account);
    const anonymousId = (await widget.register()).body.data.userId;
    // Its own Widget: a WidgetSocket reads the widget's authorization when it connects.
    const deviceOnly = new WidgetSocket(new Widget(t.account, widget.deviceId));
    widget.authorization = authFor(t.account, 'merging-customer', validUntil);
    const withHeader = new WidgetSocket(widget);
    sockets.push(deviceOnly, withHeader);
    await Promise.all([deviceOnly.connected(), withHeader.connected()]);
    const ended = (socket: WidgetSocket) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('not disconnected')), 15_000);
        socket.socket.once('disconnect', (why: string) => {
          clearTimeout(timer);
          resolve(why);
        });
      });
    const deviceOnlyEnded = ended(deviceOnly);
    const withHeaderEnded = ended(withHeader);

    const registeredId = (await widget.register()).body.data.userId;
    expect(registeredId).not.to.equal(anonymousId);
    expect(await deviceOnlyEnded).to.equal('io server disconnect');
    expect(Date.now(), 'at the merge, not at validUntil').to.be.lessThan(validUntil * 1000);
    expect(deviceOnly.events('unauthorized')).to.deep.equal([{ code: 'authorization_required' }]);
    expect(deviceOnly.events('merged')).to.deep.equal([]);
    await withHeader.waitFor('merged', 1);

    expect(await withHeaderEnded).to.equal('io server disconnect');
    expect(Date.now(), 'not before validUntil').to.be.greaterThan(validUntil * 1000);
    expect(withHeader.events('unauthorized')).to.deep.equal([{ code: 'authorization_expired' }]);
  });
});

// The five payloads against their field tables (docs/webhooks.md, "The five payloads"), key for
// key and type for type, quirks included.
import { expect } from 'chai';
import {
  changeDefaultServicePayload,
  changeOwnerPayload,
  clientMergingPayload,
  eventPayload,
  messagePayload,
} from '../src/presenters/webhook-payloads.ts';

const account = { id: 364, identification: 'a1B2c3D4e5F6g7H8', defaultServiceId: 11 };
const anonymous = { id: 5001, uniqueIdentifier: null, additionalInformation: null };
const registered = { id: 5002, uniqueIdentifier: 'customer-77', additionalInformation: { plan: 'gold', tags: ['vip'] } };
const bot = { id: 11, name: 'Bot', identification: 'botIdent0000000a' };
const desk = { id: 12, name: 'Agent desk', identification: 'deskIdent000000b' };

function keys(value: unknown): string[] {
  return Object.keys(value as object);
}

describe('webhook payloads (spec field tables)', () => {
  it('Event: type, body.name, body.body {accountId, accountIdentification}, body.user with a string id', () => {
    for (const name of ['startTyping', 'stopTyping', 'chatOpened'] as const) {
      const payload = eventPayload(name, account, registered);
      expect(keys(payload)).to.deep.equal(['type', 'body']);
      expect(payload.type).to.equal('event');
      expect(keys(payload.body)).to.deep.equal(['name', 'body', 'user']);
      expect(payload.body.name).to.equal(name);
      expect(payload.body.body).to.deep.equal({ accountId: 364, accountIdentification: 'a1B2c3D4e5F6g7H8' });
      expect(payload.body.user).to.deep.equal({
        id: '5002',
        uniqueIdentifier: 'customer-77',
        additionalInformation: { plan: 'gold', tags: ['vip'] },
      });
    }
    expect(eventPayload('chatOpened', account, anonymous).body.user).to.deep.equal({
      id: '5001',
      uniqueIdentifier: null,
      additionalInformation: null,
    });
  });

  it('Message: the declared fields in order, a ten-digit time, requestUrl omitted when unknown', () => {
    const createdAt = new Date('2026-11-21T10:00:00.900Z');
    const text = messagePayload(
      { id: 10736, createdAt, message: 'Hello', media: null, typeId: 1, requestUrl: 'https://shop.example/cart' },
      account,
      anonymous,
    );
    expect(keys(text)).to.deep.equal([
      'type',
      'id',
      'time',
      'message',
      'typeId',
      'accountIdentification',
      'accountId',
      'requestUrl',
      'user',
    ]);
    expect(text).to.deep.include({
      type: 'message',
      id: 10736,
      time: 1795255200,
      message: 'Hello',
      typeId: 1,
      accountIdentification: account.identification,
      accountId: 364,
      requestUrl: 'https://shop.example/cart',
    });
    expect(String(text.time)).to.have.length(10);
    expect(text.user).to.deep.equal({ id: '5001', uniqueIdentifier: null, additionalInformation: null });

    const image = messagePayload(
      {
        id: 10737,
        createdAt,
        message: null,
        media: { path: '2026/11/21/9f86d081.png', mimeType: 'image/png', description: 'photo.png' },
        typeId: 1,
        requestUrl: null,
      },
      account,
      registered,
    );
    expect(image.message).to.equal('{{img/364/2026/11/21/9f86d081.png}}');
    expect(image).to.not.have.property('requestUrl');

    const system = messagePayload(
      { id: 10738, createdAt, message: 'logged_in', media: null, typeId: 4, requestUrl: null },
      account,
      registered,
    );
    expect(system).to.include({ message: 'logged_in', typeId: 4 });
  });

  it('Action changeOwner: type "owner", a numeric user id, owners with name, identification and default', () => {
    const payload = changeOwnerPayload({ account, user: registered, oldOwner: bot, newOwner: desk, initiatedBy: desk });
    expect(keys(payload)).to.have.members(['type', 'accountIdentification', 'user', 'body']);
    expect(payload.type).to.equal('owner');
    expect(payload.accountIdentification).to.equal(account.identification);
    expect(payload.user.id).to.equal(5002).and.to.be.a('number');
    expect(payload.body).to.deep.equal({
      action: 'changeOwner',
      metadata: '',
      oldOwner: { name: 'Bot', identification: 'botIdent0000000a', default: true },
      newOwner: { name: 'Agent desk', identification: 'deskIdent000000b', default: false },
      initiatedBy: { name: 'Agent desk', identification: 'deskIdent000000b', default: false },
    });
  });

  it('Action changeDefaultService: type "service", no user, initiatedBy the operator identifier', () => {
    const payload = changeDefaultServicePayload({ account, oldDefault: bot, newDefault: desk, initiatedBy: 'op_x1y2z3' });
    expect(keys(payload)).to.have.members(['type', 'accountIdentification', 'body']);
    expect(payload).to.not.have.property('user');
    expect(payload.type).to.equal('service');
    expect(payload.body).to.deep.equal({
      action: 'changeDefaultService',
      metadata: '',
      initiatedBy: 'op_x1y2z3',
      oldDefaultService: { name: 'Bot', identification: 'botIdent0000000a' },
      newDefaultService: { name: 'Agent desk', identification: 'deskIdent000000b' },
    });
  });

  it('Client merging: no type, additionalInformation as JSON text, requestUrl omitted when unknown', () => {
    const payload = clientMergingPayload({
      account,
      oldUserId: 5001,
      newUser: registered,
      requestUrl: 'https://shop.example/login',
    });
    expect(payload).to.not.have.property('type');
    expect(payload).to.deep.equal({
      updateUser: {
        oldUserId: 5001,
        newUserId: 5002,
        uniqueIdentifier: 'customer-77',
        additionalInformation: '{"plan":"gold","tags":["vip"]}',
      },
      accountId: 364,
      requestUrl: 'https://shop.example/login',
    });
    const bare = clientMergingPayload({
      account,
      oldUserId: 5001,
      newUser: { ...registered, additionalInformation: null },
      requestUrl: null,
    });
    expect(bare.updateUser.additionalInformation).to.equal(null);
    expect(bare).to.not.have.property('requestUrl');
  });
});

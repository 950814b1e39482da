// A chat client as a test sees it: one device of one account, calling the Client API over
// real HTTP with the identification header, and signed in when given a customer identity.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { issueAuthorization } from '../../src/api/client/authorization.ts';
import type { AccountData } from './factories.ts';
import { client, type Answer, type RequestOptions } from './http.ts';
import { sharedServer } from './server.ts';

export function newDeviceId(): string {
  return `dev-${randomBytes(12).toString('hex')}`;
}

/** What the customer's backend would issue for `identification`, valid for an hour by default. */
export function authFor(account: AccountData, identification: string, validUntil = Math.floor(Date.now() / 1000) + 3600): string {
  return issueAuthorization(account, identification, validUntil);
}

export class Widget {
  constructor(
    readonly account: AccountData,
    readonly deviceId: string = newDeviceId(),
    public authorization: string | undefined = undefined,
    readonly prefix = '',
    readonly baseUrl = sharedServer().url,
  ) {}

  signIn(identification: string): this {
    this.authorization = authFor(this.account, identification);
    return this;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      'x-iris-identification': `${this.account.identification}:${this.deviceId}`,
      ...(this.authorization ? { authorization: this.authorization } : {}),
      ...extra,
    };
  }

  call<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<Answer<T>> {
    const api = client(this.baseUrl);
    const verb = method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    return api[verb]<T>(this.prefix + path, { ...options, headers: this.headers(options.headers) });
  }

  register(body: Record<string, unknown> = {}) {
    return this.call<{ userId: number }>('POST', '/devices', { json: body });
  }

  send(body: Record<string, unknown> | string) {
    return this.call<{ messageId: string }>('POST', '/messages', {
      json: typeof body === 'string' ? { message: body } : body,
    });
  }

  messages(path = '/messages') {
    return this.call<ClientMessage[]>('GET', path);
  }
}

/**
 * A web visitor of the account: a widget registered on the page `referer`, with these contact
 * details set through the widget (null: none).
 */
export async function webVisitor(
  account: AccountData,
  baseUrl: string,
  referer: string,
  contact: Record<string, unknown> | null,
): Promise<{ widget: Widget; userId: number }> {
  const widget = new Widget(account, undefined, undefined, '', baseUrl);
  const registered = await widget.register({ type: 3, referer });
  expect(registered.status, registered.text).to.equal(200);
  if (contact) {
    const set = await widget.call('PUT', '/users/me/contact', { json: contact });
    expect(set.status, set.text).to.equal(200);
  }
  return { widget, userId: registered.body.data.userId };
}

export interface ClientMessage {
  id: number;
  time: number;
  message: string | null;
  image: string | null;
  typeId: number;
  agent: { id: number; name: string; avatar: string | null; isTyping: null } | null;
  status: number;
  media: Record<string, unknown> | null;
  [key: string]: unknown;
}

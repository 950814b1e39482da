// The Client API over fetch, as a cross-origin page calls it: the identification header on every
// call, the registered user's Authorization after login, JSON sent as text/plain so that no
// preflight is needed for a body (Palaver reads it as JSON), no cookies.
import { ApiError, type ChatMessage, type Envelope } from './types.ts';

/** The Client API version the widget speaks (the newest, as the Parley web library does). */
const PREFIX = '/clientApi/v1.9';

export interface Page {
  messages: ChatMessage[];
  /** The cursor of the next older page, or null at the start of the conversation. */
  olderThan: number | null;
  welcomeMessage: string | null;
  stickyMessage: string | null;
  agent: ChatMessage['agent'];
}

/** What a visitor's message sends, over REST or the socket. */
export type OutgoingBody =
  { message: string | null; clientMessageId: string } | { media: { id: string | null; description: string }; clientMessageId: string };

export interface Credentials {
  account: string;
  deviceId: string;
  authorization: string | null;
}

export class ClientApi {
  constructor(
    private readonly server: string,
    private readonly credentials: () => Credentials,
  ) {}

  headers(): Record<string, string> {
    const { account, deviceId, authorization } = this.credentials();
    return {
      'x-iris-identification': `${account}:${deviceId}`,
      ...(authorization ? { authorization } : {}),
    };
  }

  private async call<T>(method: string, path: string, body?: BodyInit): Promise<Envelope<T>> {
    const response = await fetch(this.server + PREFIX + path, { method, headers: this.headers(), body, credentials: 'omit' });
    // An answer that is not JSON (a proxy's error page) is an error without a code.
    const parsed = (await response.json().catch(() => null)) as Envelope<T> | null;
    if (!response.ok || !parsed || parsed.status === 'ERROR') {
      const codes = parsed?.notifications.map((n) => n.message) ?? [];
      throw new ApiError(response.status, codes[0] ?? `http_${response.status}`, codes);
    }
    return parsed;
  }

  /** POST /devices: anonymous, or (with an authorization) the registered user, merging the anonymous conversation. */
  async register(referer: string): Promise<number> {
    const answer = await this.call<{ userId: number }>('POST', '/devices', JSON.stringify({ type: 3, version: '1.0.0', referer }));
    return answer.data.userId;
  }

  async page(before?: number): Promise<Page> {
    const answer = await this.call<ChatMessage[]>('GET', before === undefined ? '/messages' : `/messages/before:${before}`);
    const paging = answer.paging as { before?: string } | undefined;
    const match = /before:(\d+)/.exec(paging?.before ?? '');
    return {
      messages: answer.data,
      olderThan: match ? Number(match[1]) : null,
      welcomeMessage: (answer.welcomeMessage as string | null | undefined) ?? null,
      stickyMessage: (answer.stickyMessage as string | null | undefined) ?? null,
      agent: (answer.agent as ChatMessage['agent'] | undefined) ?? null,
    };
  }

  async unseen(): Promise<number[]> {
    return (await this.call<{ messageIds: number[] }>('GET', '/messages/unseen/count')).data.messageIds;
  }

  /** POST /users/me/transcript: the conversation emailed to the customer; the address it goes to. */
  async transcript(): Promise<string> {
    return (await this.call<{ email: string }>('POST', '/users/me/transcript')).data.email;
  }

  async markSeen(messageIds: number[]): Promise<void> {
    await this.call('PUT', '/messages/status/4', JSON.stringify({ messageIds }));
  }

  /**
   * POST /messages: the visitor's message (text or an upload, with its clientMessageId); answers
   * the stored message's id. The socket sends the same body when it is up (transport.ts).
   */
  async send(body: OutgoingBody): Promise<number> {
    const answer = await this.call<{ messageId?: string } | null>('POST', '/messages', JSON.stringify(body));
    // An acknowledgement without the id (a proxy's answer): tried again like any other failure.
    if (!answer.data?.messageId) throw new ApiError(200, 'http_200');
    return Number(answer.data.messageId);
  }

  /** POST /media: the upload's id, to send as a message's media. */
  async upload(file: File): Promise<string> {
    const form = new FormData();
    form.append('media', file, file.name);
    return (await this.call<{ media: string }>('POST', '/media', form)).data.media;
  }

  /** A conversation's file, fetched with the caller's headers (media is not public). */
  async media(path: string): Promise<Blob> {
    const response = await fetch(`${this.server}${PREFIX}/media/${path}`, { headers: this.headers(), credentials: 'omit' });
    if (!response.ok) throw new ApiError(response.status, `http_${response.status}`);
    return response.blob();
  }
}

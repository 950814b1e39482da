// The Client API calls of the pre-chat form, the business hours and the email link
// (docs/widget.md): the account's chat settings, the visitor's contact details, and the
// redemption of `#palaver-conversation=`. Same headers and envelope as api.ts.
import { ApiError, type Envelope } from './types.ts';

const PREFIX = '/clientApi/v1.9';

export interface PrechatForm {
  fields: 'none' | 'email' | 'name_email';
  timing: 'before' | 'after';
}

export interface ChatSettings {
  prechatForm: PrechatForm;
  replyTimeMinutes: number | null;
  /** null: no business hours, always open. */
  hours: { open: boolean; closesAt: string | null; nextOpenAt: string | null; timeZone: string } | null;
}

export interface Contact {
  email: string | null;
  name: string | null;
  source: 'client' | 'service' | null;
}

export type Redemption = 'current' | 'device' | 'sign_in' | 'elsewhere';

export class ReachApi {
  constructor(
    private readonly server: string,
    private readonly headers: () => Record<string, string>,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(this.server + PREFIX + path, {
      method,
      headers: this.headers(),
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
    });
    const parsed = (await response.json().catch(() => null)) as Envelope<T> | null;
    if (!response.ok || !parsed || parsed.status === 'ERROR') {
      // A validation failure's codes are the fields it names (`body.email`).
      const codes = parsed?.notifications.map((n) => (n as { field?: string }).field ?? n.message) ?? [];
      throw new ApiError(response.status, parsed?.notifications[0]?.message ?? `http_${response.status}`, codes);
    }
    return parsed.data;
  }

  settings(): Promise<ChatSettings> {
    return this.call('GET', '/chat-settings');
  }

  contact(): Promise<Contact> {
    return this.call('GET', '/users/me/contact');
  }

  setContact(contact: { email: string; name: string | null; language: 'en' | 'nl' }): Promise<Contact> {
    return this.call('PUT', '/users/me/contact', contact);
  }

  /** `deviceId`: the fresh device to make when the conversation is not this device's (none: make none). */
  redeem(token: string, deviceId: string | undefined): Promise<{ outcome: Redemption; deviceId: string }> {
    return this.call('POST', '/conversation-link', deviceId ? { token, deviceId } : { token });
  }
}

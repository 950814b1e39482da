// The visitor's messages on their way: sent one at a time in the order written, tried again after
// failures that may pass, with the same clientMessageId every time so Palaver writes each once.
import type { ClientApi, OutgoingBody } from './api.ts';
import { Backoff } from './backoff.ts';
import type { Conversation, Outgoing } from './conversation.ts';
import { codeOf, DEVICE_GONE } from './refusals.ts';
import type { Strings } from './strings.ts';
import type { Transport } from './transport.ts';
import { isUnavailable } from './unavailable.ts';

/** A refusal of the message itself: trying it again cannot help. */
const FINAL = new Set([
  'validation_failed',
  'media_not_found',
  'invalid_media_type',
  'media_too_large',
  'storage_quota_exceeded',
  // The visitor's upload quota: it frees up within the hour, not within the widget's retries.
  'device_upload_quota_exceeded',
  'conversation_upload_quota_exceeded',
  'missing_media',
]);

function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `w${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** What the queue needs of the widget. */
export interface QueueHost {
  /** Registers and connects if not done yet; settles whether or not that worked. */
  start(): Promise<void>;
  /** Destroyed, or refused for good: nothing is sent. */
  stopped(): boolean;
  unavailable(): boolean;
  deviceId(): string;
  becomeUnavailable(code: string): void;
  deviceGone(deviceId: string): void;
  render(): void;
}

export class OutgoingQueue {
  /** An outgoing message is being tried (one at a time, in order). */
  private sending = false;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly backoff = new Backoff();

  constructor(
    private readonly conversation: Conversation,
    private readonly transport: Transport,
    private readonly api: ClientApi,
    private readonly strings: Strings,
    private readonly host: QueueHost,
  ) {}

  /** A new message of the visitor, at the end of the queue (sent by the next flush()). */
  add(text: string | null, file: File | null): Outgoing {
    const outgoing: Outgoing = { key: newKey(), text, file, mediaId: null, state: 'sending', error: null };
    this.conversation.outgoing.push(outgoing);
    return outgoing;
  }

  /**
   * Sends what is on its way, one message at a time and in the order written, so that the
   * conversation reads as the visitor wrote it. A refused message is marked failed and the next
   * goes on; any other failure (no network, a timeout, a busy server) stops the queue until the
   * next connect, `online`, or a backoff timer, and the message goes again with the same
   * clientMessageId, so Palaver writes it once.
   */
  flush(): void {
    if (this.sending || this.host.stopped()) return;
    const next = this.conversation.outgoing.find((o) => o.state === 'sending');
    if (!next) return;
    this.sending = true;
    clearTimeout(this.retryTimer);
    void this.attempt(next).then((done) => {
      this.sending = false;
      if (done) {
        this.backoff.reset();
        this.flush();
        return;
      }
      this.retryTimer = setTimeout(() => this.flush(), this.backoff.next());
    });
  }

  /** Palaver refused this page for good: no more tries, and what was on its way shows as not sent. */
  giveUp(): void {
    clearTimeout(this.retryTimer);
    for (const outgoing of this.conversation.outgoing)
      if (outgoing.state === 'sending') {
        outgoing.state = 'failed';
        outgoing.error = null;
      }
  }

  stop(): void {
    clearTimeout(this.retryTimer);
  }

  /** One try of an outgoing message: true when it is settled (stored, or refused for good). */
  private async attempt(outgoing: Outgoing): Promise<boolean> {
    const deviceId = this.host.deviceId();
    try {
      await this.host.start();
      // Failed as not sent by becomeUnavailable.
      if (this.host.unavailable()) return true;
      if (outgoing.file && !outgoing.mediaId) outgoing.mediaId = await this.api.upload(outgoing.file);
      const body: OutgoingBody = outgoing.file
        ? { media: { id: outgoing.mediaId, description: outgoing.file.name }, clientMessageId: outgoing.key }
        : { message: outgoing.text, clientMessageId: outgoing.key };
      const id = await this.transport.send(body);
      this.conversation.confirm(outgoing, id);
      return true;
    } catch (err) {
      const code = codeOf(err);
      if (isUnavailable(code)) {
        this.host.becomeUnavailable(code);
        return true;
      }
      // Tried again as the new device, once its socket is up.
      if (code === DEVICE_GONE) this.host.deviceGone(deviceId);
      if (!code || !FINAL.has(code)) return false;
      outgoing.state = 'failed';
      outgoing.error = this.refusal(code);
      return true;
    } finally {
      this.host.render();
    }
  }

  private refusal(code: string): string {
    const s = this.strings;
    if (code === 'media_too_large' || code === 'storage_quota_exceeded') return s.fileTooLarge;
    if (code === 'invalid_media_type') return s.fileTypeRefused;
    if (code === 'device_upload_quota_exceeded' || code === 'conversation_upload_quota_exceeded') return s.uploadLimit;
    if (code === 'media_not_found' || code === 'missing_media') return s.uploadFailed;
    return s.notSent;
  }
}

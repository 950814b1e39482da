// One attempt of an email delivery: read what it should say now (compose.ts), then hand it to the
// SMTP server (nodemailer). The Message-ID is made of the delivery's id, the same on every
// attempt, so a retry after the server took the message but the answer was lost is recognised
// as the same message by whoever keeps Message-IDs.
import type { EntityManager } from '@mikro-orm/postgresql';
import nodemailer, { type Transporter } from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Config } from '../config.ts';
import type { ClaimedEmail } from '../deliveries/claims.ts';
import { composeEmail, type EmailPayload } from './compose.ts';
import { renderEmail } from './render.ts';
import { replyAddress } from './reply-address.ts';
import { composeTranscript, isTranscript, renderTranscript, type TranscriptPayload } from './transcript.ts';

export type EmailOutcome =
  /** The SMTP server accepted it (250). */
  | { kind: 'delivered'; status: 250 }
  /** Nothing to send (seen, a later answer carries it, no address, unsubscribed): ends without an email. */
  | { kind: 'skipped'; status: null; error: string }
  /** The customer has a socket connected: asked again after `email.unseenAfterSeconds`. */
  | { kind: 'postponed'; status: null; error: string }
  /** A connection failure, a timeout, or a 4xx reply: may heal. */
  | { kind: 'retry'; status: number | null; error: string; retryAfterMs: null }
  /** A 5xx reply (the address refused, the message refused): no retry. */
  | { kind: 'failed'; status: number; error: string };

/** Whether a socket of the user is connected to any node (the gateway answers; deliveries never import it). */
export interface Presence {
  connected(userId: number): Promise<boolean>;
}

type EmailConfig = Config['email'] & { publicUrl?: string | undefined };
type SmtpConfig = NonNullable<EmailConfig['smtp']>;

export function messageIdOf(deliveryId: string, publicUrl: string): string {
  return `<${deliveryId}@${new URL(publicUrl).hostname}>`;
}

export class EmailSender {
  private readonly transport: Transporter;

  constructor(
    private readonly options: EmailConfig & { smtp: SmtpConfig; publicUrl: string; linkSecret: string },
    private readonly presence: Presence,
  ) {
    const { smtp } = options;
    this.transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      requireTLS: smtp.requireTls,
      ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.password ?? '' } } : {}),
      connectionTimeout: smtp.timeoutMs,
      greetingTimeout: smtp.timeoutMs,
      socketTimeout: smtp.timeoutMs,
    });
  }

  /** Replies to the email reach the conversation (inbound.ts) when replies by email are set up. */
  private replyTo(accountId: number, userId: number): { replyTo: string } | Record<string, never> {
    const { domain, secret } = this.options.inbound;
    return domain && secret ? { replyTo: replyAddress({ domain, secret }, { accountId, userId }) } : {};
  }

  async send(em: EntityManager, delivery: ClaimedEmail): Promise<EmailOutcome> {
    const payload = JSON.parse(delivery.payload) as EmailPayload | TranscriptPayload;
    const mail = isTranscript(payload) ? await this.transcriptMail(em, delivery, payload) : await this.answerMail(em, delivery, payload);
    if ('kind' in mail) return mail;
    try {
      await this.transport.sendMail(mail);
      return { kind: 'delivered', status: 250 };
    } catch (err) {
      const { responseCode, code, message } = err as { responseCode?: number; code?: string; message?: string };
      const error = `${code ?? 'SMTP'}: ${message ?? String(err)}`.slice(0, 1000);
      // A refused login is the operator's to fix, not the message's fault: retried like an outage.
      if (typeof responseCode === 'number' && responseCode >= 500 && code !== 'EAUTH')
        return { kind: 'failed', status: responseCode, error };
      return { kind: 'retry', status: typeof responseCode === 'number' ? responseCode : null, error, retryAfterMs: null };
    }
  }

  /** The email of a burst of answers, or why none goes now. */
  private async answerMail(em: EntityManager, delivery: ClaimedEmail, payload: EmailPayload): Promise<Mail.Options | EmailOutcome> {
    // `attempts` counts this one (a postponement gives its count back).
    const composed = await composeEmail(em, payload, { retry: delivery.attempts > 1 });
    if (composed.kind === 'skip') return { kind: 'skipped', status: null, error: `not sent: ${composed.reason}` };
    const { burst } = composed;
    if (await this.presence.connected(burst.userId)) {
      return { kind: 'postponed', status: null, error: 'not sent yet: the customer is connected' };
    }
    const email = renderEmail(burst, this.options);
    return {
      from: this.options.smtp.from,
      to: burst.name ? { name: burst.name, address: burst.email } : burst.email,
      subject: email.subject,
      text: email.text,
      html: email.html,
      messageId: messageIdOf(delivery.id, this.options.publicUrl),
      ...this.replyTo(burst.accountId, burst.userId),
      headers: {
        'List-Unsubscribe': `<${email.unsubscribeUrl}>`,
        // RFC 8058: a mail client's one-click unsubscribe POSTs to the link.
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        'Auto-Submitted': 'auto-generated',
      },
    };
  }

  /** A transcript the customer asked for: sent whether or not they are connected. */
  private async transcriptMail(
    em: EntityManager,
    delivery: ClaimedEmail,
    payload: TranscriptPayload,
  ): Promise<Mail.Options | EmailOutcome> {
    const composed = await composeTranscript(em, payload);
    if (composed.kind === 'skip') return { kind: 'skipped', status: null, error: `not sent: ${composed.reason}` };
    const { transcript } = composed;
    const reply = this.replyTo(transcript.accountId, transcript.userId);
    const email = renderTranscript(transcript, { ...this.options, replyable: 'replyTo' in reply });
    return {
      from: this.options.smtp.from,
      to: transcript.name ? { name: transcript.name, address: transcript.email } : transcript.email,
      subject: email.subject,
      text: email.text,
      html: email.html,
      messageId: messageIdOf(delivery.id, this.options.publicUrl),
      ...reply,
      headers: { 'Auto-Submitted': 'auto-generated' },
    };
  }

  close(): void {
    this.transport.close();
  }
}

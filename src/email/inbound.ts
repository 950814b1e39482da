// Replies by email (docs/operations.md "Replies by email"): the customer answers an email, and
// what they wrote becomes a message of their conversation, written by the same writer as the
// Client API's messages (conversations/client-messages.ts), so the owner Service gets it through
// the outbox like any message (with no requestUrl: no page was open). Both ways in, the SMTP
// listener (inbound-smtp.ts) and the webhook route of hosted mail providers, hand the raw
// message here.
//
// - The recipient is a signed reply address (reply-address.ts): anything else is refused, and
//   the SMTP listener refuses it at RCPT, before the message is sent.
// - Idempotent: the message's client id is `email:` and a hash of its Message-ID (of its bytes
//   when it has none), unique per user, so the same email delivered again writes nothing.
// - Quoted history and signatures are stripped (reply-text.ts); attachments are not kept
//   (the customer sends files in the chat, where their types are checked).
// - Automatic mail (out-of-office replies, bounces, lists) is taken and dropped: it would
//   otherwise answer every answer.
// - Erased customers have no conversation: their addresses are refused. Unsubscribing stops the
//   emails Palaver sends, not the customer's own replies, which are written.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ClientMessageWriter } from '../conversations/client-messages.ts';
import { AccountSchema, MessageType, UserSchema } from '../db/entities/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { verifyReplyAddress, type ReplyClaims, type ReplyKeys } from './reply-address.ts';
import { replyText } from './reply-text.ts';

export interface InboundOptions {
  keys: ReplyKeys & { domain: string };
  maxBytes: number;
}

export type RecipientVerdict =
  | { ok: true; claims: ReplyClaims }
  /** Permanent (550): not a reply address of ours, or its customer was erased. */
  | { ok: false; permanent: true; reason: string };

export type InboundOutcome =
  /** Written (or written before: a repeated Message-ID answers with the first message). */
  | { kind: 'written'; messageIds: number[] }
  /** Taken and dropped: automatic mail, or nothing of the customer's own in it. */
  | { kind: 'dropped'; reason: string }
  /** No recipient is a valid reply address: refused for good. */
  | { kind: 'refused'; reason: string }
  /** The customer sent too many replies in the window: to be tried again later. */
  | { kind: 'limited'; retryAfterSeconds: number };

/** At most this many reply addresses of one email are written to (one is the rule). */
const MAX_RECIPIENTS = 5;

export class InboundMail {
  constructor(
    private readonly deps: {
      em: () => EntityManager;
      messages: ClientMessageWriter;
      /** Replies per customer (their reply address) per window. */
      limiter: RateLimiterAbstract;
      logger: Logger;
      metrics: Pick<Metrics, 'emailReplies'>;
      options: InboundOptions;
    },
  ) {}

  get maxBytes(): number {
    return this.deps.options.maxBytes;
  }

  /**
   * Whether mail to `address` is taken: its signature verifies and its customer still exists. A
   * refusal is counted (the SMTP listener's RCPT) unless `counted` is false (the other
   * recipients of a message, which need not be ours).
   */
  async recipient(address: string, { counted = true }: { counted?: boolean } = {}): Promise<RecipientVerdict> {
    const claims = verifyReplyAddress(address, this.deps.options.keys);
    const user = claims
      ? await this.deps.em().findOne(UserSchema, { id: claims.userId, accountId: claims.accountId }, { fields: ['id'] })
      : null;
    if (claims && user) return { ok: true, claims };
    if (counted) this.deps.metrics.emailReplies.inc({ outcome: 'refused' });
    return { ok: false, permanent: true, reason: claims ? 'no such conversation' : 'no such reply address' };
  }

  /**
   * One email, raw (RFC 822), with the addresses it was delivered to (the SMTP envelope; for a
   * webhook without one, the message's own To, Cc, Delivered-To and X-Original-To).
   */
  async receive(raw: Buffer, envelopeRecipients: readonly string[] | null): Promise<InboundOutcome> {
    const outcome = await this.take(raw, envelopeRecipients);
    this.deps.metrics.emailReplies.inc({ outcome: outcome.kind });
    return outcome;
  }

  private async take(raw: Buffer, envelopeRecipients: readonly string[] | null): Promise<InboundOutcome> {
    const parsed = await simpleParser(raw, { skipHtmlToText: false, skipImageLinks: true, skipTextToHtml: true });
    const addresses = envelopeRecipients ?? headerRecipients(parsed);
    const targets = new Map<number, ReplyClaims>();
    for (const address of addresses) {
      const verdict = await this.recipient(address, { counted: false });
      if (verdict.ok && targets.size < MAX_RECIPIENTS) targets.set(verdict.claims.userId, verdict.claims);
    }
    if (targets.size === 0) return { kind: 'refused', reason: 'no reply address of ours among the recipients' };
    const automatic = automaticReason(parsed);
    if (automatic) {
      this.deps.logger.info({ users: [...targets.keys()], reason: automatic }, 'email reply dropped');
      return { kind: 'dropped', reason: automatic };
    }
    const text = replyText(parsed.text ?? '');
    if (text === '') return { kind: 'dropped', reason: 'nothing written above the quoted email' };
    for (const claims of targets.values()) {
      try {
        await this.deps.limiter.consume(`${claims.accountId}:${claims.userId}`);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        return { kind: 'limited', retryAfterSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) };
      }
    }
    const clientMessageId = `email:${createHash('sha256')
      .update(parsed.messageId ?? raw)
      .digest('base64url')}`;
    const messageIds: number[] = [];
    for (const claims of targets.values()) {
      const em = this.deps.em();
      const [account, addressed] = await Promise.all([
        em.findOne(AccountSchema, { id: claims.accountId }),
        em.findOne(UserSchema, { id: claims.userId, accountId: claims.accountId }),
      ]);
      // An anonymous visitor who signed in since the email: the conversation lives on the customer's user.
      const user =
        addressed?.mergedIntoUserId != null
          ? await em.findOne(UserSchema, { id: addressed.mergedIntoUserId, accountId: claims.accountId })
          : addressed;
      // Erased since the recipient was checked: nothing to write to.
      if (!account || !user) continue;
      const { message } = await this.deps.messages.send({
        account,
        user,
        device: null,
        input: { typeId: MessageType.user, text, media: null, requestUrl: null, clientMessageId },
      });
      messageIds.push(message.id);
    }
    if (messageIds.length === 0) return { kind: 'refused', reason: 'no such conversation' };
    this.deps.logger.info({ messageIds, attachments: parsed.attachments.length }, 'email reply written');
    return { kind: 'written', messageIds };
  }
}

function addressesOf(value: AddressObject | AddressObject[] | undefined): string[] {
  const objects = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return objects.flatMap((o) => o.value.flatMap((a) => (a.address ? [a.address] : [])));
}

/** Where a message says it went, when no envelope came with it. */
function headerRecipients(parsed: ParsedMail): string[] {
  const header = (name: string): string[] => {
    const value = parsed.headers.get(name);
    if (value === undefined) return [];
    if (typeof value === 'string') return value.split(',').map((s) => s.replace(/^.*<|>.*$/g, '').trim());
    return addressesOf(value as AddressObject);
  };
  return [...new Set([...header('delivered-to'), ...header('x-original-to'), ...addressesOf(parsed.to), ...addressesOf(parsed.cc)])];
}

/** Why a message is machine-made (RFC 3834 and the headers mail systems really send), or null. */
function automaticReason(parsed: ParsedMail): string | null {
  const header = (name: string) => {
    const value = parsed.headers.get(name);
    return typeof value === 'string' ? value.toLowerCase() : value === undefined ? '' : JSON.stringify(value).toLowerCase();
  };
  const submitted = header('auto-submitted');
  if (submitted !== '' && !submitted.startsWith('no')) return 'automatic reply (Auto-Submitted)';
  if (/\b(bulk|junk|list|auto_reply)\b/.test(header('precedence'))) return 'automatic reply (Precedence)';
  if (header('x-autoreply') !== '' || header('x-autorespond') !== '') return 'automatic reply (X-Autoreply)';
  if (/multipart\/report/.test(header('content-type'))) return 'delivery report';
  return null;
}

// What the customer wrote in a reply, without the quoted history and the signature. The rules
// are email-reply-parser's (a port of GitHub's and willdurand's EmailReplyParser): it knows the
// "On … wrote:" lines of Gmail and Apple Mail, Outlook's "From:/Sent:" block and its rule, ">"
// quotes, "-- " signatures and "Sent from my iPhone", in English, Dutch and more languages
// (test/email-replies.test.ts has the replies we check). Only the text part is read (mailparser
// makes one from an HTML-only email).
import EmailReplyParser from 'email-reply-parser';
import { MAX_MESSAGE_LENGTH } from '../commands/client/input.ts';

/** The parser's regular expressions run over this much at most (a reply is short; a novel is cut). */
const MAX_SCANNED = 64 * 1024;

const parser = new EmailReplyParser();

/** The reply itself, trimmed; empty when the customer wrote nothing of their own. */
export function replyText(text: string): string {
  const scanned = text.replace(/\r\n?/g, '\n').slice(0, MAX_SCANNED);
  const reply = parser
    .parseReply(scanned)
    // Outlook on the web and some phones put a lone rule or "Sent from…" before the quote.
    .replace(/\n_{10,}\s*$/, '')
    .trim();
  if (reply.length <= MAX_MESSAGE_LENGTH) return reply;
  // Cut to the longest message, never between the two halves of a surrogate pair.
  const cut = reply.slice(0, MAX_MESSAGE_LENGTH);
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

// What a connected client may send: the same calls as the REST routes, through the same
// commands, rules and write limits, each acknowledged with the envelope REST would answer.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { openConversation, type ClientCallers } from './caller.ts';
import { conversationKeys } from '../../conversations/caller-snapshot.ts';
import type { ClientMessageWriter } from '../../conversations/client-messages.ts';
import type { TypingTimeouts } from '../../conversations/client-events.ts';
import { messageBody } from '../../commands/client/input.ts';
import { sendClientEvent } from '../../commands/client/send-event.ts';
import { sendClientMessage } from '../../commands/client/send-message.ts';
import { buildEnvelope, errorNotifications, type EnvelopeParts } from '../../presenters/envelope.ts';
import { AppError, knownError } from '../../errors.ts';
import { consumeWrite } from '../../limits.ts';
import type { Admission } from '../../http/admission.ts';
import { check } from '../../validation.ts';
import type { Logger } from '../../logger.ts';
import type { EventName } from '../../presenters/webhook-payloads.ts';
import type { Ack, ClientSocket, ClientToServerEvents } from '../../realtime/socket-event-maps.ts';

export interface ClientEventDeps {
  em: () => EntityManager;
  messages: ClientMessageWriter;
  callers: ClientCallers;
  admission: Admission;
  writeLimiter: RateLimiterAbstract;
  addressWriteLimiter: RateLimiterAbstract;
  typing: TypingTimeouts;
  logger: Logger;
}

/**
 * How long a socket keeps its identified caller at most. The account's changes drop it at once
 * through their notice (accountChanged(), on every node through Redis); this bounds what a lost
 * notice leaves stale. Each socket reads its caller again once per period: at 60 s, 3,000
 * conversations read 50 callers a second, a round trip each on the embedded database's one
 * connection (docs/performance.md).
 */
const CALLER_TTL_MS = 10 * 60_000;

/** The socket's next event identifies its caller afresh (the conversation it was opened as changed). */
export function dropCaller(socket: ClientSocket): void {
  socket.data.caller = undefined;
  socket.data.callerEpoch += 1;
}

type Work = (socket: ClientSocket, body: unknown) => Promise<EnvelopeParts>;
type Handler = (this: ClientSocket, ...args: unknown[]) => void;

/**
 * The handlers of the client events, made once for all sockets: Socket.IO calls a listener
 * with its socket as `this`, so a socket carries four references, not four closures (about
 * 2 KB a socket less, measured by the connections benchmark).
 */
export function clientEventHandlers(deps: ClientEventDeps): Array<[keyof ClientToServerEvents, Handler]> {
  /**
   * Identified at the socket's first event and kept, not read again for every event: a login
   * merge or a device moving to another customer drops it at once (their notices, see
   * Gateway), the authorization's validUntil bounds it, and so does the end of a rotated
   * secret's grace; changes to the account (allowed origins, a new secret) drop it at once
   * through their notice, and CALLER_TTL_MS bounds a lost notice. A refusal is not kept.
   */
  const kept = (socket: ClientSocket) => {
    const { caller } = socket.data;
    return caller && caller.until > Date.now() ? caller.conversation : undefined;
  };
  /** The kept conversation at once (no promise for the usual event), else a promise of it read. */
  const conversationOf = (socket: ClientSocket) => kept(socket) ?? identify(socket);
  const identify = async (socket: ClientSocket) => {
    const now = Date.now();
    const { callerEpoch } = socket.data;
    const caller = await deps.callers.identify(socket.data.headers);
    const conversation = conversationKeys(openConversation(caller));
    const validUntil = caller.identity?.validUntil;
    // A rotated secret's grace ends: the header may have been verified by the secret before.
    const graceEnds = caller.account.previousAuthorizationSecretExpiresAt?.getTime() ?? 0;
    const until = Math.min(
      now + CALLER_TTL_MS,
      validUntil === undefined ? Infinity : validUntil * 1000,
      graceEnds > now ? graceEnds : Infinity,
    );
    // A notice that dropped the caller while it was being read (a merge) wins: kept for the next event only if none came.
    if (socket.data.callerEpoch === callerEpoch) socket.data.caller = { conversation, until };
    return conversation;
  };

  /**
   * Admitted first, synchronously: a full node answers server_busy at once, having written
   * nothing (a refusal thrown by enter() rejects the call: answered like any error); then the
   * write limits, then the work. One async function, not a chain of then()s: every event pays for
   * each promise it makes, and for the ORM's AsyncLocalStorage hooks on each.
   */
  const admitted = async (socket: ClientSocket, body: unknown, work: Work): Promise<EnvelopeParts> => {
    const release = deps.admission.enter();
    try {
      await consumeWrite(deps, socket.data.limitKey, socket.data.address);
      return await work(socket, body);
    } finally {
      release();
    }
  };

  /** Runs one client event like its REST route: limit, work, and the envelope as the answer. */
  const handler = (event: keyof ClientToServerEvents, path: string, work: Work): Handler =>
    function (this: ClientSocket, ...args: unknown[]) {
      const origin = { path, method: 'post', startedAt: process.hrtime.bigint() };
      // The acknowledgement is the last argument, whatever came before it: `emit('startTyping', cb)`
      // hands the callback over as the first and only one. Without one, nobody hears the answer.
      const last = args.at(-1);
      const answer = typeof last === 'function' ? (last as Ack) : () => undefined;
      const body = typeof last === 'function' ? (args.length > 1 ? args[0] : undefined) : args[0];
      admitted(this, body, work).then(
        (parts) => answer(buildEnvelope(origin, true, parts)),
        (err: unknown) => {
          const known = knownError(err);
          if (!known) deps.logger.error({ err, event }, 'socket event failed');
          const error = known ?? new AppError(500, 'internal_error');
          answer(buildEnvelope(origin, false, { data: error.data, notifications: errorNotifications(error) }));
        },
      );
    };

  const message = handler('message', '/messages', async (socket, raw) => {
    const body = check(messageBody, raw ?? {}, 'body');
    const conversation = conversationOf(socket);
    const keys = conversation instanceof Promise ? await conversation : conversation;
    // A user changed since the socket read it (a new owner, say) is read again at the next event.
    const written = await sendClientMessage(deps.messages, keys, body, socket.data.referer, () => dropCaller(socket));
    return { data: { messageId: String(written.id) } };
  });

  const event = (name: EventName, path: string) =>
    handler(name, path, async (socket) => {
      await sendClientEvent(deps, await conversationOf(socket), name);
      return { data: {} };
    });

  return [
    ['message', message],
    ['startTyping', event('startTyping', '/services/event/startTyping')],
    ['stopTyping', event('stopTyping', '/services/event/stopTyping')],
    ['chatOpened', event('chatOpened', '/services/event/ChatOpened')],
  ];
}

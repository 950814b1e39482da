// What a connected client may send: the same calls as the REST routes, through the same
// commands, rules and write limits, each acknowledged with the envelope REST would answer.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { openConversation, type ClientCallers } from '../client/caller.ts';
import type { ClientMessageWriter } from '../chat/client-messages.ts';
import { sendEvent, type TypingTimeouts } from '../chat/events.ts';
import { buildEnvelope, errorNotifications, type EnvelopeParts } from '../http/envelope.ts';
import { AppError } from '../http/errors.ts';
import { knownError } from '../http/middleware/error-handler.ts';
import { consumeOrRefuse } from '../http/middleware/rate-limit.ts';
import { check } from '../http/validate.ts';
import type { Logger } from '../logger.ts';
import type { EventName } from '../presenters/webhook-payloads.ts';
import { messageBody } from '../routes/client/schema.ts';
import type { Ack, ClientToServerEvents } from './events.ts';
import type { ClientSocket, Gateway } from './gateway.ts';

export interface ClientEventDeps {
  em: () => EntityManager;
  messages: ClientMessageWriter;
  callers: ClientCallers;
  writeLimiter: RateLimiterAbstract;
  typing: TypingTimeouts;
  logger: Logger;
}

type Work = (socket: ClientSocket, body: unknown) => Promise<EnvelopeParts>;
type Handler = (this: ClientSocket, body: unknown, ack?: Ack) => void;

/**
 * The handlers of the client events, made once for all sockets: Socket.IO calls a listener
 * with its socket as `this`, so a socket carries four references, not four closures (about
 * 2 KB a socket less, measured by the connections benchmark).
 */
export function clientEventHandlers(deps: ClientEventDeps, gateway: Gateway): Array<[keyof ClientToServerEvents, Handler]> {
  /** Identified afresh for each event, like each REST call (the authorization may have expired). */
  const conversationOf = async (socket: ClientSocket) => openConversation(await deps.callers.identify(socket.data.headers));

  /** Runs one client event like its REST route: limit, work, and the envelope as the answer. */
  const handler =
    (event: keyof ClientToServerEvents, path: string, work: Work): Handler =>
    function (this: ClientSocket, body, ack) {
      const origin = { path, method: 'post', startedAt: process.hrtime.bigint() };
      const answer = typeof ack === 'function' ? ack : () => undefined;
      consumeOrRefuse(deps.writeLimiter, this.data.limitKey)
        .then(() => work(this, body))
        .then(
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
    const { account, device, user } = await conversationOf(socket);
    const { message: written, prevId } = await deps.messages.send({
      account,
      user,
      device,
      input: { typeId: body.typeId ?? 1, text: body.message ?? null, media: body.media ?? null, requestUrl: body.referer ?? body.referrer ?? null },
    });
    gateway.messageCreated(written, prevId);
    return { data: { messageId: String(written.id) } };
  });

  const event = (name: EventName, path: string) =>
    handler(name, path, async (socket) => {
      const { account, user } = await conversationOf(socket);
      await sendEvent(deps.em(), account, user, name);
      if (name === 'startTyping') deps.typing.started(user.id);
      if (name === 'stopTyping') deps.typing.stopped(user.id);
      return { data: {} };
    });

  return [
    ['message', message],
    ['startTyping', event('startTyping', '/services/event/startTyping')],
    ['stopTyping', event('stopTyping', '/services/event/stopTyping')],
    ['chatOpened', event('chatOpened', '/services/event/ChatOpened')],
  ];
}

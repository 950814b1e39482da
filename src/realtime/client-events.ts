// What a connected client may send: the same calls as the REST routes, through the same
// commands, rules and write limits, each acknowledged with the envelope REST would answer.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { identifyCaller, openConversation } from '../client/caller.ts';
import { sendClientMessage } from '../chat/client-messages.ts';
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
  writeLimiter: RateLimiterAbstract;
  typing: TypingTimeouts;
  logger: Logger;
}

type Work = (body: unknown) => Promise<EnvelopeParts>;

export function registerClientEvents(socket: ClientSocket, deps: ClientEventDeps, gateway: Gateway): void {
  const { headers } = socket.data;
  /** Identified afresh for each event, like each REST call (the authorization may have expired). */
  const conversationOf = async (em: EntityManager) => openConversation(em, await identifyCaller(em, headers));

  /** Runs one client event like its REST route: limit, work, and the envelope as the answer. */
  const on = (event: keyof ClientToServerEvents, path: string, work: Work) => {
    socket.on(event, (body: unknown, ack?: Ack) => {
      const origin = { path, method: 'post', startedAt: process.hrtime.bigint() };
      const answer = typeof ack === 'function' ? ack : () => undefined;
      consumeOrRefuse(deps.writeLimiter, socket.data.limitKey)
        .then(() => work(body))
        .then(
          (parts) => answer(buildEnvelope(origin, true, parts)),
          (err: unknown) => {
            const known = knownError(err);
            if (!known) deps.logger.error({ err, event }, 'socket event failed');
            const error = known ?? new AppError(500, 'internal_error');
            answer(buildEnvelope(origin, false, { data: error.data, notifications: errorNotifications(error) }));
          },
        );
    });
  };

  on('message', '/messages', async (raw) => {
    const body = check(messageBody, raw ?? {}, 'body');
    const em = deps.em();
    const { account, device, user } = await conversationOf(em);
    const { message, prevId } = await sendClientMessage(em, account, user, device, {
      typeId: body.typeId ?? 1,
      text: body.message ?? null,
      media: body.media ?? null,
      requestUrl: body.referer ?? null,
    });
    gateway.messageCreated(user.id, message, prevId);
    return { data: { messageId: String(message.id) } };
  });

  const event = (name: EventName, path: string) =>
    on(name, path, async () => {
      const em = deps.em();
      const { account, user } = await conversationOf(em);
      await sendEvent(em, account, user, name);
      if (name === 'startTyping') deps.typing.started(user.id);
      if (name === 'stopTyping') deps.typing.stopped(user.id);
      return { data: {} };
    });
  event('startTyping', '/services/event/startTyping');
  event('stopTyping', '/services/event/stopTyping');
  event('chatOpened', '/services/event/ChatOpened');
}

// startTyping, stopTyping and chatOpened, the same for REST (POST /services/event/{name}) and
// sockets: the Event payload to the owner Service, and the server's own stopTyping timer.
import { sendEvent, type TypingTimeouts } from '../../conversations/client-events.ts';
import type { ConversationKeys } from '../../conversations/caller-snapshot.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventName } from '../../presenters/webhook-payloads.ts';

export async function sendClientEvent(
  deps: { em: () => EntityManager; typing: TypingTimeouts },
  conversation: ConversationKeys,
  name: EventName,
): Promise<void> {
  const { account, user } = conversation;
  await sendEvent(deps.em(), account, user, name);
  if (name === 'startTyping') deps.typing.started(user.id);
  if (name === 'stopTyping') deps.typing.stopped(user.id);
}

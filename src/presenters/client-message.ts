// A message as chat clients read it, in the shape of the reference bodies
// (test/support/parley-shapes.ts holds the keys and types they read): the same object in GET
// /messages and socket events.
import type { AgentSnapshot, MediaReference, Message, MessageButton, User } from '../db/entities/index.ts';
import { typingAgent, typingUntilSeconds } from '../conversations/typing.ts';
import { mediaReference } from './webhook-payloads.ts';

/**
 * `isTyping` is known only on the root agent of a conversation and in the socket `agentTyping`
 * push: while the agent types, the Unix time in seconds until which the indicator lasts (a
 * number, which the Android library reads as a timestamp); null otherwise, as on the agent of
 * every message in the reference bodies.
 */
export function presentAgent(agent: AgentSnapshot | null | undefined, isTyping: number | null = null) {
  if (!agent) return null;
  return { id: agent.id, name: agent.name, avatar: agent.avatar ?? null, isTyping };
}

/** The root `agent` of a conversation: the current agent, and until when it types, if it does now. */
export function presentCurrentAgent(user: Pick<User, 'currentAgent' | 'agentTyping' | 'agentTypingUntil'>) {
  const typing = typingAgent(user);
  const current = user.currentAgent;
  return presentAgent(current, current && typing?.id === current.id ? typingUntilSeconds(user.agentTypingUntil) : null);
}

function presentMedia(media: MediaReference | null, accountId: number) {
  if (!media) return { image: null, media: null };
  const reference = `img/${mediaReference(accountId, media.path)}`;
  const [year = '', month = '', day = '', filename = ''] = media.path.split('/');
  return {
    image: reference,
    media: { id: reference, mimeType: media.mimeType, year, month, day, filename, description: media.description },
  };
}

/** In the reference order of keys: title, payload, type. */
function presentButtons(buttons: readonly MessageButton[]) {
  return buttons.map((b) => ({ title: b.title, payload: b.payload, type: b.type }));
}

export function presentClientMessage(message: Message, accountId: number) {
  const { image, media } = presentMedia(message.media ?? null, accountId);
  const content = message.content ?? null;
  const time = Math.floor(message.createdAt.getTime() / 1000);
  return {
    id: message.id,
    time,
    message: message.message ?? null,
    image,
    typeId: message.typeId,
    agent: presentAgent(message.agent),
    // Each card is read as a message by the clients (the web library spreads it over its
    // message, iOS and Android decode it with their message model): every key of a message but
    // the id, which is the message's own; the time, type and status are the message's, the
    // agent null (the reference's cards name no agent).
    carousel: (content?.carousel ?? []).map((item) => ({
      time,
      message: item.message,
      ...presentMedia(item.media, accountId),
      typeId: message.typeId,
      agent: null,
      carousel: [],
      quickReplies: [],
      custom: [],
      title: item.title,
      buttons: presentButtons(item.buttons),
      status: message.status,
    })),
    quickReplies: content?.quickReplies ?? [],
    custom: [],
    title: content?.title ?? null,
    media,
    buttons: presentButtons(content?.buttons ?? []),
    status: message.status,
  };
}

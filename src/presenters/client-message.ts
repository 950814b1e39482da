// A message as chat clients read it, in the shape of the reference bodies
// (shared/reference/parley-web-library): the same object in GET /messages and socket events.
import type { AgentSnapshot, Message } from '../db/entities/index.ts';
import { mediaReference } from './webhook-payloads.ts';

export function presentAgent(agent: AgentSnapshot | null | undefined) {
  if (!agent) return null;
  return { id: agent.id, name: agent.name, avatar: agent.avatar ?? null, isTyping: null };
}

export function presentClientMessage(message: Message, accountId: number) {
  const media = message.media ?? null;
  const reference = media ? `img/${mediaReference(accountId, media.path)}` : null;
  const [year = '', month = '', day = '', filename = ''] = media ? media.path.split('/') : [];
  return {
    id: message.id,
    time: Math.floor(message.createdAt.getTime() / 1000),
    message: media ? null : (message.message ?? null),
    image: reference,
    typeId: message.typeId,
    agent: presentAgent(message.agent),
    carousel: [],
    quickReplies: [],
    custom: [],
    title: null,
    media: media
      ? { id: reference, mimeType: media.mimeType, year, month, day, filename, description: media.description }
      : null,
    buttons: [],
    status: message.status,
  };
}

// What a push carries to the Parley apps: the data map their handlers read
// (PushNotificationHandler.java, ParleyActor.swift `handle`). `parley` is JSON text
// {type, object}; `message` is the text the notification shows.
import type { Message } from '../db/entities/index.ts';
import { presentClientMessage } from './client-message.ts';

export type PushEventName = 'startTyping' | 'stopTyping';

/** A message as GET /messages presents it; the apps fetch GET /messages/{id} with its id. */
export function pushMessagePayload(message: Message, accountId: number): Record<string, string> {
  return {
    parley: JSON.stringify({ type: 'message', object: presentClientMessage(message, accountId) }),
    // A message of media or buttons only shows its title, else nothing in particular.
    message: message.message ?? message.content?.title ?? '',
  };
}

/** Agent typing: the apps call onAgentStartTyping / onAgentStopTyping and show nothing. */
export function pushEventPayload(name: PushEventName): Record<string, string> {
  return { parley: JSON.stringify({ type: 'event', object: { name } }) };
}

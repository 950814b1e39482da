// A chat client's message, the same for REST (POST /messages) and sockets (`message`): the
// validated body, the caller's conversation and the page the client is on in, the written
// message out (its notice to sockets goes out with the commit, see conversations/notices.ts).
import type { ClientMessageWriter } from '../../conversations/client-messages.ts';
import type { ConversationKeys } from '../../conversations/caller-snapshot.ts';
import type { Message } from '../../db/entities/index.ts';
import { pageAddress, type MessageBody } from './input.ts';

export async function sendClientMessage(
  writer: ClientMessageWriter,
  conversation: ConversationKeys,
  body: MessageBody,
  refererHeader: string | undefined,
  /** Called when the writer found the user changed since `conversation` was read. */
  stale?: () => void,
): Promise<Message> {
  const { account, device, user } = conversation;
  const { message } = await writer.send({
    account,
    user,
    device,
    input: {
      typeId: body.typeId ?? 1,
      text: body.message ?? null,
      media: body.media ?? null,
      requestUrl: pageAddress(body, refererHeader),
      clientMessageId: body.clientMessageId ?? null,
    },
    ...(stale ? { stale } : {}),
  });
  return message;
}

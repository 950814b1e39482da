// What the widget knows of the conversation: stored messages by id (from pages, pushes and
// acknowledgements, each once, in id order), the visitor's messages still on their way, and the
// feed cursor the socket resumes from.
import { TYPE, type AgentView, type ChatMessage } from './types.ts';

/** A message the visitor sent that Palaver has not confirmed yet. */
export interface Outgoing {
  /** Its clientMessageId: the same on every try, so Palaver writes it once. */
  key: string;
  text: string | null;
  file: File | null;
  /** The upload's id once the file is uploaded (uploaded once, however often the message is tried). */
  mediaId: string | null;
  state: 'sending' | 'failed';
  /** Why it failed for good (the server refused it), for the visitor; null while it is retried. */
  error: string | null;
}

export type Entry = { kind: 'message'; message: ChatMessage } | { kind: 'outgoing'; outgoing: Outgoing };

const isAgentSide = (m: ChatMessage) => m.typeId === TYPE.agent || m.typeId === TYPE.agentSystem;

export class Conversation {
  readonly messages = new Map<number, ChatMessage>();
  readonly outgoing: Outgoing[] = [];
  /** Agent messages the visitor has not seen (status below 4). */
  readonly unread = new Set<number>();
  /** Files of the visitor's own messages, shown from memory rather than downloaded again. */
  readonly localFiles = new Map<number, File>();
  /** The oldest loaded page's cursor: older messages exist before it; null: the start is loaded; undefined: nothing loaded yet. */
  olderThan: number | null | undefined = undefined;
  /**
   * The newest id the widget has from a source that is complete up to it (a page, or the
   * socket's ordered feed): where a reconnecting socket resumes. Acknowledged ids do not move it:
   * an agent message written just before the visitor's own could still be on its way.
   */
  cursor = 0;
  welcomeMessage: string | null = null;
  stickyMessage: string | null = null;
  agent: AgentView | null = null;
  typing: AgentView | null = null;

  /** Messages from a page or the feed. Answers the agent-side messages that were new. */
  add(messages: readonly ChatMessage[], complete: boolean): ChatMessage[] {
    const fresh: ChatMessage[] = [];
    for (const message of messages) {
      if (complete && message.id > this.cursor) this.cursor = message.id;
      const known = this.messages.get(message.id);
      this.messages.set(message.id, known ? { ...message, status: Math.max(known.status, message.status) } : message);
      if (known) continue;
      if (isAgentSide(message)) {
        fresh.push(message);
        if (message.status < 4) this.unread.add(message.id);
      }
    }
    return fresh;
  }

  /** The visitor's message was stored as `id`: it leaves the outgoing list and takes its place by id. */
  confirm(outgoing: Outgoing, id: number): void {
    this.drop(outgoing);
    if (outgoing.file) this.localFiles.set(id, outgoing.file);
    if (this.messages.has(id)) return;
    this.messages.set(id, {
      id,
      time: Math.floor(Date.now() / 1000),
      message: outgoing.text,
      typeId: TYPE.user,
      agent: null,
      title: null,
      media: outgoing.file
        ? {
            id: '',
            mimeType: outgoing.file.type,
            year: '',
            month: '',
            day: '',
            filename: outgoing.file.name,
            description: outgoing.file.name,
          }
        : null,
      buttons: [],
      quickReplies: [],
      carousel: [],
      status: 2,
    });
  }

  /** The message leaves the outgoing list: stored, or refused for good and removed by the visitor. */
  drop(outgoing: Outgoing): void {
    const at = this.outgoing.indexOf(outgoing);
    if (at >= 0) this.outgoing.splice(at, 1);
  }

  setStatus(updates: ReadonlyArray<{ id: number; status: number }>): void {
    for (const { id, status } of updates) {
      const known = this.messages.get(id);
      if (known && status > known.status) this.messages.set(id, { ...known, status });
      if (status >= 4) this.unread.delete(id);
    }
  }

  /** Everything to show, oldest first: stored messages by id, then what is still on its way. */
  entries(): Entry[] {
    const stored = [...this.messages.values()].sort((a, b) => a.id - b.id);
    return [
      ...stored.map((message): Entry => ({ kind: 'message', message })),
      ...this.outgoing.map((outgoing): Entry => ({ kind: 'outgoing', outgoing })),
    ];
  }

  /** The newest stored message (for quick replies, which only the last message offers). */
  last(): ChatMessage | undefined {
    let newest: ChatMessage | undefined;
    for (const message of this.messages.values()) if (!newest || message.id > newest.id) newest = message;
    return newest;
  }

  oldestId(): number | undefined {
    let oldest: number | undefined;
    for (const id of this.messages.keys()) if (oldest === undefined || id < oldest) oldest = id;
    return oldest;
  }

  /** Forgets the conversation (a login merged it into another, or a logout left it). Outgoing messages stay. */
  reset(): void {
    this.messages.clear();
    this.unread.clear();
    this.localFiles.clear();
    this.olderThan = undefined;
    this.cursor = 0;
    this.agent = null;
    this.typing = null;
  }
}

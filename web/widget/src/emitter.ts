// Palaver.on(event, handler): what a site can listen to.
import type { ChatMessage } from './types.ts';

export interface WidgetEvents {
  open: undefined;
  close: undefined;
  /** A new message from the agent side. */
  message: ChatMessage;
  /** Agent messages the visitor has not seen (0 while the chat is open and on screen). */
  unread: number;
}

type Handler<T> = (payload: T) => void;

export class Emitter<E> {
  private readonly handlers = new Map<keyof E, Set<Handler<never>>>();

  on<K extends keyof E>(event: K, handler: Handler<E[K]>): () => void {
    let set = this.handlers.get(event);
    if (!set) {
      set = new Set();
      this.handlers.set(event, set);
    }
    set.add(handler);
    return () => set.delete(handler);
  }

  emit<K extends keyof E>(event: K, payload: E[K]): void {
    for (const handler of this.handlers.get(event) ?? []) {
      try {
        (handler as Handler<E[K]>)(payload);
      } catch (err) {
        // A site's handler that throws must not stop the widget.
        console.error('Palaver widget: an event handler failed', err);
      }
    }
  }

  clear(): void {
    this.handlers.clear();
  }
}

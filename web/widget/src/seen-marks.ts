// Marking agent messages seen (PUT /messages/status/4) while the open chat is on screen. A refusal
// for good ends in the unavailable state; any other failure is tried again after a growing delay
// (a new message or the tab coming back does not hurry it), so a lasting error never becomes a
// flood of calls.
import type { ClientApi } from './api.ts';
import { Backoff } from './backoff.ts';
import type { Conversation } from './conversation.ts';
import { codeOf, DEVICE_GONE } from './refusals.ts';
import { isUnavailable } from './unavailable.ts';

/** What marking needs of the widget. */
export interface SeenHost {
  /** The open chat is on screen, the device registered and the chat available. */
  canMark(): boolean;
  deviceId(): string;
  /** Messages were marked seen: the badge and the list follow. */
  marked(): void;
  becomeUnavailable(code: string): void;
  deviceGone(deviceId: string): void;
}

export class SeenMarks {
  private marking = false;
  /** Marking failed for a reason that may pass: tried again when this fires. */
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly backoff = new Backoff();

  constructor(
    private readonly api: ClientApi,
    private readonly conversation: Conversation,
    private readonly host: SeenHost,
  ) {}

  /** Marks what is unread now, if the visitor can see it. */
  mark(): void {
    const ids = [...this.conversation.unread];
    if (ids.length === 0 || this.marking || this.timer || !this.host.canMark()) return;
    this.marking = true;
    const deviceId = this.host.deviceId();
    this.api.markSeen(ids).then(
      () => {
        this.marking = false;
        this.backoff.reset();
        this.conversation.setStatus(ids.map((id) => ({ id, status: 4 })));
        this.host.marked();
        // Anything that arrived meanwhile.
        this.mark();
      },
      (err: unknown) => {
        this.marking = false;
        const code = codeOf(err);
        if (isUnavailable(code)) return this.host.becomeUnavailable(code);
        // The new device has nothing unread.
        if (code === DEVICE_GONE) return this.host.deviceGone(deviceId);
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.mark();
        }, this.backoff.next());
      },
    );
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

// Admission of the Client API's writes on one node: past its capacity a node refuses at once,
// with a code the client acts on (503 server_busy, Retry-After), instead of queueing writes until
// every caller times out. What a node has accepted it still commits and acknowledges; what it
// refuses it has not written, so a refused write is simply sent again (the widget retries it
// with the same clientMessageId; Parley clients retry a 5xx).
import { AppError } from '../errors.ts';

/** The code and wait a refused write is answered with, over REST (Retry-After) and sockets (data.retryAfter). */
export const serverBusy = (retryAfterSeconds: number) =>
  new AppError(503, 'server_busy', [], { retryAfter: retryAfterSeconds }, { 'retry-after': String(retryAfterSeconds) });

export interface AdmissionOptions {
  /** Client writes in progress on this node (accepted, not yet answered) beyond which more are refused. */
  maxWritesInFlight: number;
  /** What a refusal tells the client to wait, in seconds. */
  retryAfterSeconds: number;
}

export class Admission {
  private inFlight = 0;

  constructor(
    private readonly options: AdmissionOptions,
    /** Told of each refusal (the metrics count them). */
    private readonly onRefused: () => void = () => undefined,
  ) {}

  /**
   * Takes a place for one client write, counted synchronously so that a burst cannot pass the
   * bound together; the caller gives it back with the returned function once the write is
   * answered. Throws 503 server_busy when the node is full.
   */
  enter(): () => void {
    if (this.inFlight >= this.options.maxWritesInFlight) {
      this.onRefused();
      throw serverBusy(this.options.retryAfterSeconds);
    }
    this.inFlight += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight -= 1;
    };
  }

  get writesInFlight(): number {
    return this.inFlight;
  }
}

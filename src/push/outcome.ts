import type { Outcome } from '../deliveries/sender.ts';

/**
 * What came of one push: a webhook's outcomes; `unregistered` (the push service says the token
 * will never work again: it is removed from the device and the push is not retried); or
 * `undeliverable` (nothing to send it with any more: no request was made). Both end the push
 * dead. `gone` never comes of a push: a push webhook's 410 means the token is gone.
 */
export type PushOutcome =
  | Exclude<Outcome, { kind: 'gone' }>
  | { kind: 'unregistered'; status: number; error: string }
  | { kind: 'undeliverable'; status: null; error: string };

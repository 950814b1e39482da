// The error codes the widget acts on, read from REST answers, socket acknowledgements and
// handshake refusals alike.
import { ApiError } from './types.ts';

/** Codes with which Palaver refuses a device that is registered but called without (valid) authorization. */
export const NEEDS_AUTHORIZATION = new Set([
  'device_requires_authorization',
  'device_not_registered',
  'authorization_expired',
  'invalid_authorization',
]);

/** The device no longer exists: an operator erased its user (GDPR), or it was never registered here. */
export const DEVICE_GONE = 'device_not_found';

export const codeOf = (err: unknown) => (err instanceof ApiError ? err.code : null);

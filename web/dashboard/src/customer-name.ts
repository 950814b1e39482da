// How a customer is named on every page: the name or email the Service gave, else their id.
import type { UserSummary } from './types.ts';

export function customerName(user: UserSummary): string {
  const info = user.additionalInformation as { name?: unknown; email?: unknown } | null;
  const named = typeof info?.name === 'string' ? info.name : typeof info?.email === 'string' ? info.email : null;
  return named ?? user.uniqueIdentifier ?? `Anonymous user ${user.id}`;
}

import type { User } from '../db/entities/index.ts';

/** A user's contact details as the Service API and the Admin API show them; null when none was given. */
export function presentContact(user: User) {
  if (user.contactSource == null && user.emailUnsubscribedAt == null) return null;
  return {
    email: user.email ?? null,
    name: user.contactName ?? null,
    language: user.contactLanguage ?? null,
    /** `client` (the customer) or `service` (their backend, which wins). */
    source: user.contactSource ?? null,
    updatedAt: user.contactUpdatedAt?.toISOString() ?? null,
    /** The customer followed the unsubscribe link of an email: none is sent to them any more. */
    emailUnsubscribed: user.emailUnsubscribedAt != null,
  };
}

// The customer's contact details on their user: set by the customer (Client API) or by their
// backend (Service API), under the user's row lock like every change of a conversation. The
// backend's details win: once a Service set them, the customer's own writes are refused until
// the Service clears them (PUT with every field null), since the backend knows who signed in.
import { LockMode } from '@mikro-orm/core';
import { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UserSchema, type ContactSource, type User } from '../db/entities/index.ts';
import { AppError, notFound } from '../errors.ts';
import { refuseMerged } from './users.ts';

export const CONTACT_LANGUAGES = ['en', 'nl'] as const;
export type ContactLanguage = (typeof CONTACT_LANGUAGES)[number];

export interface ContactInput {
  email: string | null;
  name: string | null;
  language: ContactLanguage | null;
}

export async function setContact(
  em: EntityManager,
  input: { accountId: number; userId: number; source: ContactSource; contact: ContactInput },
): Promise<User> {
  return em.transactional(async (tx) => {
    const user = await tx.findOne(UserSchema, { id: input.userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!user || user.accountId !== input.accountId) throw notFound('user_not_found');
    refuseMerged(user);
    if (input.source === 'client' && user.contactSource === 'service') throw new AppError(409, 'contact_set_by_service');
    const { email, name, language } = input.contact;
    const empty = email === null && name === null && language === null;
    user.email = email;
    user.contactName = name;
    user.contactLanguage = language;
    user.contactSource = empty ? null : input.source;
    user.contactUpdatedAt = new Date();
    return user;
  });
}

/**
 * The unsubscribe link: no email goes to the user any more, from now (a pending one is skipped
 * when it comes due: the sender reads this under the same row). Idempotent; false when the
 * user is gone (erased).
 */
export async function unsubscribeEmail(em: EntityManager, input: { accountId: number; userId: number }): Promise<boolean> {
  return em.transactional(async (tx) => {
    const user = await tx.findOne(UserSchema, { id: input.userId, accountId: input.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!user) return false;
    user.emailUnsubscribedAt ??= new Date();
    return true;
  });
}

/**
 * The body of both contact routes (Client API PUT /users/me/contact, Service API PUT
 * /users/{userId}/contact): the whole contact, a field left out is cleared.
 */
export const contactBody = z.object({
  email: z
    .string()
    .trim()
    .max(254)
    .email('must be an email address')
    .nullable()
    .optional()
    .transform((v) => v ?? null),
  name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .nullable()
    .optional()
    .transform((v) => v ?? null),
  language: z
    .enum(CONTACT_LANGUAGES)
    .nullable()
    .optional()
    .transform((v) => v ?? null),
});

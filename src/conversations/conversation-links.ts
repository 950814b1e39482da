// The way back from an email (docs/security.md, "Answers by email"): the widget on the page the
// customer chatted on finds `#palaver-conversation=<token>` in the address and asks Palaver what
// it may open. The token is signed, expires with the email's other links, and names the account,
// the user and a digest of the address the email went to, so that it stops working when the
// customer's address changes (a mistyped address corrected, or replaced by their backend).
//
// What a holder gets is no more than the conversation the email was about, and only where a
// device id is all that protects it anyway: the browser whose device is already the user's just
// opens it; another browser gets a new device of that anonymous user (the same standing as the
// browser that started it); a registered customer's conversation is never opened by a link, the
// site's sign-in (the authorization header) is still needed for it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { DeviceSchema, UserSchema, type Account } from '../db/entities/index.ts';
import { addressDigest, type LinkClaims } from '../email/links.ts';
import { AppError, notFound } from '../errors.ts';
import { deviceLock, lockName } from './locks.ts';

export type Redemption =
  /** The caller's device is the conversation's already: open it. */
  | 'current'
  /** A new device of the conversation's anonymous user was made with the id the caller gave. */
  | 'device'
  /** The conversation is a registered customer's: the site's sign-in opens it, the link does not. */
  | 'sign_in'
  /** The conversation is another one, and the caller asked for no new device (a signed-in widget keeps its customer). */
  | 'elsewhere';

export async function redeemConversationLink(
  em: EntityManager,
  input: {
    account: Pick<Account, 'id'>;
    claims: Extract<LinkClaims, { k: 'conversation' }>;
    /** The caller's device (the identification header). */
    deviceId: string;
    /** The id of the device to make when the caller's is not the conversation's; none: make none. */
    newDeviceId: string | undefined;
  },
): Promise<Redemption> {
  const { account, claims } = input;
  if (claims.a !== account.id) throw notFound('link_not_found');
  return em.transactional(async (tx) => {
    // Device lock before the user's row, as POST /devices takes them.
    if (input.newDeviceId) await lockName(tx, deviceLock(account.id, input.newDeviceId));
    let user = await tx.findOne(UserSchema, { id: claims.u, accountId: account.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    // The address the email went to, still the user's; an erased user is as gone as a forged link.
    if (!user || !user.email || addressDigest(user.email) !== claims.e) throw notFound('link_not_found');
    // Signed in since: the conversation is the registered customer's now.
    if (user.mergedIntoUserId != null) user = await tx.findOne(UserSchema, { id: user.mergedIntoUserId, accountId: account.id });
    if (!user) throw notFound('link_not_found');
    const mine = await tx.findOne(DeviceSchema, { accountId: account.id, uniqueAppDeviceId: input.deviceId });
    if (mine?.userId === user.id) return 'current';
    if (user.kind === 'registered') return 'sign_in';
    if (!input.newDeviceId) return 'elsewhere';
    if (await tx.findOne(DeviceSchema, { accountId: account.id, uniqueAppDeviceId: input.newDeviceId }))
      throw new AppError(409, 'device_exists');
    tx.create(DeviceSchema, {
      accountId: account.id,
      uniqueAppDeviceId: input.newDeviceId,
      userId: user.id,
      type: 3,
      version: null,
      pushToken: null,
      pushType: null,
      pushEnabled: false,
      referer: null,
    });
    return 'device';
  });
}

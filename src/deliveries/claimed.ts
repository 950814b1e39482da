// What the worker holds of a delivery under its lease: claimed (claims.ts) or handed over by the
// commit that wrote it (db/tx/transaction.ts). Types only, so the transaction object can carry
// hand-offs without importing the claim statements.
import type { DeliveryKind } from '../db/entities/index.ts';
import type { AnyPushSettings } from '../push/settings.ts';

export interface ClaimedBase {
  id: string;
  kind: DeliveryKind;
  payload: string;
  /** Including the attempt about to be made. */
  attempts: number;
  /**
   * Whose concurrency limit the attempt counts against: the Service id, or for a push the
   * negated account id (an account's pushes share its FCM project or push webhook), or 0 for
   * an email (every email goes through the one SMTP server).
   */
  bucket: number;
}

export interface ClaimedWebhook extends ClaimedBase {
  serviceId: number;
  deviceId: null;
  webhookUrl: string;
  signingSecret: string;
  /** The rotated-out secret while its grace period lasts: requests carry both signatures. */
  previousSigningSecret: string | null;
}

/** A push, with the device and its account's settings as they are now (not as enqueued). */
export interface ClaimedPush extends ClaimedBase {
  serviceId: null;
  deviceId: number;
  userId: number;
  deviceType: number;
  /** Null, or pushes switched off, or no settings for the type: the push cannot be sent. */
  pushToken: string | null;
  pushType: number | null;
  pushEnabled: boolean;
  pushSettings: AnyPushSettings | null;
}

/** An answer by email to a user: what it holds is read when it is sent (email/compose.ts). */
export interface ClaimedEmail extends ClaimedBase {
  serviceId: null;
  deviceId: null;
  userId: number;
}

export type ClaimedDelivery = ClaimedWebhook | ClaimedPush | ClaimedEmail;

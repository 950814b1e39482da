import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** Per-account chat settings, kept as one JSON document. */
export interface AccountSettings {
  /**
   * Origins (`https://shop.example`) whose pages may call the Client API from a browser;
   * absent or empty: any origin (the Client API authenticates by headers, never cookies).
   */
  allowedOrigins?: string[];
  /** The widget's pre-chat form, business hours and usual reply time (tenancy/chat-settings.ts). */
  prechatForm?: unknown;
  businessHours?: unknown;
  replyTimeMinutes?: number | null;
  [key: string]: unknown;
}

export const AccountSchema = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  properties: (p) => ({
    id: p.integer().primary(),
    identification: p.string().unique(),
    name: p.string(),
    authorizationSecret: p.string(),
    /** The secret before the last rotation: still verifies headers until it expires. */
    previousAuthorizationSecret: p.string().nullable(),
    previousAuthorizationSecretExpiresAt: p.datetime().nullable(),
    defaultServiceId: p.integer().nullable(),
    welcomeMessage: p.text().nullable(),
    stickyMessage: p.text().nullable(),
    settings: p.json<AccountSettings>(),
    /** Every operator with grants on the account must sign in with a second factor to use them. */
    requireTwoFactor: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});

export type Account = InferEntity<typeof AccountSchema>;

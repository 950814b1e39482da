import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** Per-account chat settings; media limits join them with the Client API. */
export interface AccountSettings {
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
    defaultServiceId: p.integer().nullable(),
    welcomeMessage: p.text().nullable(),
    stickyMessage: p.text().nullable(),
    settings: p.json<AccountSettings>(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
});

export type Account = InferEntity<typeof AccountSchema>;

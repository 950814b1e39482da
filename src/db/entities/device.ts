import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** 1 Android, 2 iOS, 3 Web, 4 Generic. */
export type DeviceType = 1 | 2 | 3 | 4;

export const DeviceSchema = defineEntity({
  name: 'Device',
  tableName: 'devices',
  properties: (p) => ({
    id: p.integer().primary(),
    accountId: p.integer(),
    uniqueAppDeviceId: p.string(),
    userId: p.integer(),
    type: p.smallint().$type<DeviceType>(),
    version: p.string().nullable(),
    pushToken: p.text().nullable(),
    pushType: p.smallint().nullable(),
    pushEnabled: p.boolean(),
    referer: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});

export type Device = InferEntity<typeof DeviceSchema>;

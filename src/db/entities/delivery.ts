import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** Service webhooks: event, message, action, client_merging. Pushes to devices: push_message, push_event. Answers by email: email. */
export type DeliveryKind = 'event' | 'message' | 'action' | 'handover' | 'client_merging' | 'push_message' | 'push_event' | 'email';
export type DeliveryState = 'pending' | 'delivered' | 'dead';

/**
 * The outbox: one row per payload per Service (its webhook) or per device (a push, see
 * docs/push.md), written in the transaction of the change that caused it. `id` is the
 * Standard Webhooks `webhook-id`; `seq` orders one ordering key.
 */
export const DeliverySchema = defineEntity({
  name: 'Delivery',
  tableName: 'deliveries',
  properties: (p) => ({
    id: p.uuid().primary(),
    seq: p.bigint('number'),
    serviceId: p.integer().nullable(),
    /** Set instead of serviceId for a push; its ordering key is the device id too. */
    deviceId: p.integer().nullable(),
    /** Set instead of serviceId and deviceId for an email to the user; its ordering key is the negated user id. */
    userId: p.integer().nullable(),
    orderingKey: p.integer().nullable(),
    kind: p.string().$type<DeliveryKind>(),
    payload: p.text(),
    attempts: p.integer(),
    nextAttemptAt: p.datetime(),
    state: p.string().$type<DeliveryState>(),
    ready: p.boolean(),
    claimedUntil: p.datetime().nullable(),
    claimedBy: p.string().nullable(),
    lastStatus: p.integer().nullable(),
    lastError: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    deliveredAt: p.datetime().nullable(),
  }),
});

export type Delivery = InferEntity<typeof DeliverySchema>;

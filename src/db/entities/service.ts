import { defineEntity, type InferEntity } from '@mikro-orm/core';

export type ServiceDisabledReason = 'operator' | 'webhook_gone';

/** `webhook`: a backend (webhooks, API keys); `inbox`: the account's team, answering from the dashboard. */
export type ServiceKind = 'webhook' | 'inbox';

/** Which conversations it does not own a Service hears of (docs/decisions/switchboard.md). */
export type StandbyMode = 'none' | 'all' | 'participated';

/** The payload kinds a Service's webhook wants; handover events and client merging are actions. */
export type WebhookKind = 'messages' | 'events' | 'actions';
export const WEBHOOK_KINDS: readonly WebhookKind[] = ['messages', 'events', 'actions'];

/** A backend attached to an account: it receives webhooks and calls the Service API. */
export const ServiceSchema = defineEntity({
  name: 'Service',
  tableName: 'services',
  properties: (p) => ({
    id: p.integer().primary(),
    accountId: p.integer(),
    name: p.string(),
    kind: p.string().$type<ServiceKind>().default('webhook'),
    identification: p.string().unique(),
    webhookUrl: p.text().nullable(),
    signingSecret: p.string(),
    previousSigningSecret: p.string().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    disabledAt: p.datetime().nullable(),
    /** 'operator' (PATCH enabled: false) or 'webhook_gone' (the endpoint answered 410). */
    disabledReason: p.string().$type<ServiceDisabledReason>().nullable(),
    standby: p.string().$type<StandbyMode>().default('none'),
    webhookKinds: p.array<WebhookKind>().onCreate(() => [...WEBHOOK_KINDS]),
    /** Where this Service's pass without a target, its release, and its switching off hand a conversation. */
    handoverNextServiceId: p.integer().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});

export type Service = InferEntity<typeof ServiceSchema>;

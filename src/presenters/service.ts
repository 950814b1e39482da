import type { Service } from '../db/entities/index.ts';

/** A Service as operators see it. Secrets leave the server only where a presenter adds them. */
export function presentService(service: Service, defaultServiceId: number | null) {
  return {
    id: service.id,
    accountId: service.accountId,
    identification: service.identification,
    name: service.name,
    /** `webhook` or `inbox` (the team, answering from the dashboard: no webhook URL, no API keys). */
    kind: service.kind,
    webhookUrl: service.webhookUrl ?? null,
    isDefault: service.id === defaultServiceId,
    enabled: !service.disabledAt,
    disabledAt: service.disabledAt?.toISOString() ?? null,
    disabledReason: service.disabledReason ?? null,
    /** The switchboard (docs/service-api.md): which conversations it does not own it hears of, what its webhook wants, where it hands over. */
    standby: service.standby,
    webhookKinds: [...service.webhookKinds],
    handoverNextServiceId: service.handoverNextServiceId ?? null,
    createdAt: service.createdAt.toISOString(),
  };
}

/** The answer to creating a Service: the only time the API key is ever shown. */
export function presentCreatedService(service: Service, defaultServiceId: number | null, apiKey: string) {
  return { ...presentService(service, defaultServiceId), signingSecret: service.signingSecret, apiKey };
}

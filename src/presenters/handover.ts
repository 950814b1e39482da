import type { HandoverState } from '../conversations/handover.ts';
import type { Service } from '../db/entities/index.ts';

function ref(service: Service, defaultServiceId: number | null) {
  return { name: service.name, identification: service.identification, default: service.id === defaultServiceId };
}

/** A conversation's switchboard, for the Service API and the dashboard. */
export function presentHandoverState(state: HandoverState, defaultServiceId: number | null) {
  return {
    active: ref(state.active, defaultServiceId),
    pending: state.pending
      ? {
          ...ref(state.pending.service, defaultServiceId),
          offeredBy: state.pending.offeredBy ? ref(state.pending.offeredBy, defaultServiceId) : null,
          expiresAt: state.pending.expiresAt.toISOString(),
        }
      : null,
    standby: state.standby.map((service) => ref(service, defaultServiceId)),
  };
}

// Who is on a conversation besides the team (docs/dashboard.md, "Services on a conversation"):
// its active Service, the one offered it (until when) and the Services listening on standby.
// A line of its own under the conversation's heading, read each time the conversation is drawn.
import { api } from '../api.ts';
import { formatTime, h, show } from '../dom.ts';

interface ServiceRef {
  name: string;
  identification: string;
  default: boolean;
}

export interface Switchboard {
  active: ServiceRef;
  pending: (ServiceRef & { offeredBy: ServiceRef | null; expiresAt: string }) | null;
  standby: ServiceRef[];
}

function name(service: ServiceRef): string {
  return service.default ? `${service.name} (default)` : service.name;
}

/** The line, filled once `GET …/users/{id}/handover` answers; empty if it cannot be read. */
export function switchboardLine(conversationPath: string): HTMLElement {
  const line = h('div', { class: 'hint switchboard', role: 'group', 'aria-label': 'Services on this conversation' });
  api
    .get<Switchboard>(`${conversationPath}/handover`)
    .then(({ data }) => {
      show(
        line,
        h('span', {}, `Active: ${name(data.active)}`),
        data.pending ? h('span', {}, ` · Offered to ${name(data.pending)} until ${formatTime(data.pending.expiresAt)}`) : null,
        h('span', {}, ` · Standby: ${data.standby.length > 0 ? data.standby.map(name).join(', ') : 'none'}`),
      );
    })
    .catch(() => show(line));
  return line;
}

// A card that rotates a secret (a Service's signing secret, an account's authorization secret):
// confirmed first, the new secret shown once, with until when the old one still counts.
import { api } from '../api.ts';
import { formatTime, h, show } from '../dom.ts';
import { busy, confirm, say, secretBox, statusLine } from '../ui.ts';

export interface SecretRotation {
  /** The card's heading, and the name of the secret in the button, dialog and status ("Signing secret"). */
  title: string;
  hint: string;
  /** What rotating does, in the confirmation dialog. */
  consequence: string;
  /** The Admin API route that rotates it. */
  path: string;
  /** The secret's field in the answer (beside previousSecretExpiresAt). */
  field: string;
  /** The note under the new secret, given " until <time>" (or '') for the old one. */
  note: (until: string) => string;
  /** Why the button is disabled; null when it is not. */
  refused: string | null;
}

export function secretRotationSection(rotation: SecretRotation): HTMLElement {
  const lower = rotation.title.toLowerCase();
  const button = h('button', { type: 'button', class: 'secondary', disabled: rotation.refused !== null }, `Rotate ${lower}`);
  const status = statusLine();
  const result = h('div', {});
  const id = `${rotation.field}-title`;
  button.addEventListener(
    'click',
    () =>
      void (async () => {
        if (!(await confirm(`Rotate ${lower}`, rotation.consequence, 'Rotate secret'))) return;
        await busy(button, status, async () => {
          const rotated = (await api.post<Record<string, string | null>>(rotation.path)).data;
          const expires = rotated.previousSecretExpiresAt;
          show(
            result,
            secretBox(`New ${lower}`, rotated[rotation.field] ?? '', rotation.note(expires ? ` until ${formatTime(expires)}` : '')),
          );
          say(status, `${rotation.title} rotated.`);
        });
      })(),
  );
  return h(
    'section',
    { class: 'card', 'aria-labelledby': id },
    h('h2', { id }, rotation.title),
    h('p', { class: 'hint' }, rotation.hint),
    button,
    rotation.refused === null ? null : h('p', { class: 'hint' }, rotation.refused),
    status,
    result,
  );
}

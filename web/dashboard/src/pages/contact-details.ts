// The customer's contact details in the inbox's side panel (docs/dashboard.md): the email and
// name answers by email go to, and who set them (the customer in the widget's form, or their
// backend through the Service API, whose details win), or that they unsubscribed.
import { h } from '../dom.ts';

export interface ContactView {
  email: string | null;
  name: string | null;
  language: string | null;
  source: 'client' | 'service' | null;
  updatedAt: string | null;
  emailUnsubscribed: boolean;
}

const SOURCES = { client: 'the customer (chat widget)', service: 'their backend (Service API)' } as const;

/** Rows of the panel's description list; "none given" when the customer left no details. */
export function contactRows(contact: ContactView | null | undefined): HTMLElement[] {
  if (!contact?.source && !contact?.emailUnsubscribed) return [h('dt', {}, 'Email'), h('dd', {}, 'none given')];
  const set = contact.source
    ? `by ${SOURCES[contact.source]}${contact.updatedAt ? `, ${new Date(contact.updatedAt).toLocaleString()}` : ''}`
    : '—';
  return [
    h('dt', {}, 'Email'),
    h(
      'dd',
      {},
      contact.email ? h('a', { href: `mailto:${contact.email}` }, contact.email) : '—',
      contact.emailUnsubscribed ? ' (unsubscribed: no answers by email)' : '',
    ),
    ...(contact.name ? [h('dt', {}, 'Name'), h('dd', {}, contact.name)] : []),
    h('dt', {}, 'Contact set'),
    h('dd', {}, set),
  ];
}

// The widget's options: `data-*` attributes on its script tag, or `window.palaverSettings` set
// before the script runs (which wins where both name an option). docs/widget.md lists them.
import { STRINGS, type Strings } from './strings.ts';

/** Gives the registered-user header of the Client API (Parley's `Authorization` value), or null for anonymous. */
export type AuthorizationProvider = () => string | null | Promise<string | null>;

export interface Settings {
  /** The account's identification (required). */
  account: string;
  /** Palaver's origin: where the script was loaded from, unless given. */
  server: string;
  title: string;
  /** Any CSS colour; the launcher, the visitor's bubbles and the Send button use it. */
  primaryColor: string;
  position: 'right' | 'left';
  locale: string;
  strings: Strings;
  startOpen: boolean;
  authorization: AuthorizationProvider | null;
}

export interface RawSettings {
  account?: string;
  server?: string;
  title?: string;
  primaryColor?: string;
  position?: string;
  locale?: string;
  strings?: Partial<Strings>;
  startOpen?: boolean | string;
  authorization?: AuthorizationProvider | string | null;
}

const truthy = (value: boolean | string | undefined) => value === true || value === 'true' || value === '';

function fromScript(script: HTMLScriptElement | null): RawSettings {
  if (!script) return {};
  const data = script.dataset;
  const raw: RawSettings = {};
  if (data.account) raw.account = data.account;
  if (data.server) raw.server = data.server;
  if (data.title) raw.title = data.title;
  if (data.primaryColor) raw.primaryColor = data.primaryColor;
  if (data.position) raw.position = data.position;
  if (data.locale) raw.locale = data.locale;
  if (data.startOpen !== undefined) raw.startOpen = data.startOpen;
  return raw;
}

function serverOf(script: HTMLScriptElement | null): string {
  if (script?.src) return new URL(script.src, location.href).origin;
  return location.origin;
}

export function readSettings(script: HTMLScriptElement | null, global: RawSettings | undefined): Settings {
  const raw: RawSettings = { ...fromScript(script), ...(global ?? {}) };
  if (!raw.account) throw new Error('Palaver widget: no account (data-account on the script tag, or palaverSettings.account)');
  const locale = (raw.locale ?? navigator.language ?? 'en').toLowerCase();
  const base = STRINGS[locale] ?? STRINGS[locale.split('-')[0] ?? 'en'] ?? STRINGS.en;
  const strings: Strings = { ...(base as Strings), ...(raw.strings ?? {}) };
  const authorization = raw.authorization;
  return {
    account: raw.account,
    server: (raw.server ?? serverOf(script)).replace(/\/+$/, ''),
    title: raw.title ?? strings.defaultTitle,
    primaryColor: raw.primaryColor ?? '#1f6feb',
    position: raw.position === 'left' ? 'left' : 'right',
    locale,
    strings,
    startOpen: truthy(raw.startOpen),
    authorization: typeof authorization === 'string' ? () => authorization : (authorization ?? null),
  };
}

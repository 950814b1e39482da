// Refusals that say the widget is set up wrong for this page: the snippet names no account (or
// not one Palaver can read), the account does not allow this page's origin, or the account has
// nowhere to route chats. Trying again cannot help until the site owner changes something, so
// the widget stops calling Palaver, tells the visitor the chat is unavailable, and tells the site
// owner (in the console) what to check.

/** What the site owner should check, per refusal code. */
const CHECKS = new Map<string, (account: string) => string>([
  [
    'account_not_found',
    (account) =>
      `no Palaver account has the identification "${account}". Check the data-account value of the script tag against the account's identification in the dashboard.`,
  ],
  [
    'invalid_identification',
    (account) =>
      `"${account}" is not an account identification (letters, digits, - and _ only). Check the data-account value of the script tag.`,
  ],
  [
    'origin_not_allowed',
    (account) =>
      `the account "${account}" does not allow this page's origin (${location.origin}). Add it to the account's "Allowed widget origins" in the dashboard, or check that data-account names the right account.`,
  ],
  ['account_has_no_service', (account) => `the account "${account}" has no default Service to take chats. Set one in the dashboard.`],
]);

/** True for a refusal that retrying cannot fix. */
export const isUnavailable = (code: string | null): code is string => code !== null && CHECKS.has(code);

/** The one console line for the site owner: the code, the account from the snippet, what to check. */
export function ownerMessage(code: string, account: string): string {
  return `Palaver chat widget: the chat is unavailable on this page (${code}): ${CHECKS.get(code)?.(account) ?? ''}`;
}

// Deliveries to private, loopback and link-local addresses are refused unless the server allows
// them (PALAVER_WEBHOOK_ALLOW_PRIVATE, which GET /adminApi/session tells): said while the URL is typed. The server checks the
// resolved address; this sees only literal addresses and local names, "send test event" tells
// for sure.
const PRIVATE = [
  /^localhost$/,
  /\.localhost$/,
  /\.local$/,
  /^127\./,
  /^10\./,
  /^192\.168\./,
  /^172\.(1[6-9]|2\d|3[01])\./,
  /^169\.254\./,
  /^0\./,
  /^\[?::1\]?$/,
  /^\[?f[cd]/,
  /^\[?fe80:/,
];

export function privateAddressWarning(value: string, allowed: boolean): string {
  if (allowed) return '';
  let host: string;
  try {
    host = new URL(value).hostname.toLowerCase();
  } catch {
    return '';
  }
  return PRIVATE.some((pattern) => pattern.test(host))
    ? 'This is a private address: deliveries to it are refused unless the server allows private addresses (PALAVER_WEBHOOK_ALLOW_PRIVATE).'
    : '';
}

// The operator's token lives in sessionStorage: gone when the tab closes, never a cookie (the
// Client API reads no cookies, and no other page of this origin sends it by itself).
const KEY = 'palaver.dashboard.token';

export const session = {
  get token(): string | null {
    return sessionStorage.getItem(KEY);
  },
  set(token: string): void {
    sessionStorage.setItem(KEY, token);
  },
  clear(): void {
    sessionStorage.removeItem(KEY);
  },
};

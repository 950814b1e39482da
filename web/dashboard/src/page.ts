// What a page is given: imported by the router (main.ts) and by every page, so that neither
// imports the other.
import type { Me } from './types.ts';

export interface PageContext {
  main: HTMLElement;
  me: Me;
  /** Runs when the page is left (live listeners, timers). */
  onLeave(cleanup: () => void): void;
  /** Reads the session again and redraws (the grants change when two-factor sign-in is turned on). */
  refresh(): Promise<void>;
}

/** A page: drawn into `ctx.main` from the numbers of its address (#/accounts/3/services/5 → 3, 5). */
export type Page = (ctx: PageContext, ...params: number[]) => Promise<void>;

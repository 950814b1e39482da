// The browser bundles (scripts/build-web.ts), built once per test process before a browser test
// loads them: a test never runs the bundle of an earlier checkout.
import { buildWeb } from '../../scripts/build-web.ts';

let built: Promise<void> | undefined;

export function ensureWebBuilt(): Promise<void> {
  built ??= buildWeb();
  return built;
}

// The Palaver chat widget: one script tag on a host page (docs/widget.md). Everything lives in
// one Shadow DOM; the one global is window.Palaver.
import { readSettings, type RawSettings } from './settings.ts';
import type { WidgetEvents } from './emitter.ts';
import { Widget } from './widget.ts';

interface PalaverApi {
  open(): void;
  close(): void;
  toggle(): void;
  login(authorization: string): Promise<void>;
  logout(): Promise<void>;
  on<K extends keyof WidgetEvents>(event: K, handler: (payload: WidgetEvents[K]) => void): () => void;
  destroy(): void;
}

declare global {
  interface Window {
    Palaver?: PalaverApi;
    palaverSettings?: RawSettings;
  }
}

function install(script: HTMLScriptElement | null): void {
  if (window.Palaver) return;
  const widget = new Widget(readSettings(script, window.palaverSettings));
  window.Palaver = {
    open: () => widget.open(),
    close: () => widget.close(),
    toggle: () => widget.toggle(),
    login: (authorization) => widget.login(authorization),
    logout: () => widget.logout(),
    on: (event, handler) => widget.events.on(event, handler),
    destroy: () => {
      widget.destroy();
      delete window.Palaver;
    },
  };
}

// Read now: document.currentScript is only set while this script first runs.
const script = document.currentScript instanceof HTMLScriptElement ? document.currentScript : null;
if (document.body) install(script);
else document.addEventListener('DOMContentLoaded', () => install(script), { once: true });

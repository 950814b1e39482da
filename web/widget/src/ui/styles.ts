// The widget's CSS, inside its Shadow DOM: nothing leaks out to the host page and the page's CSS
// does not reach in (`all: initial` on the host stops inherited properties too). Adopted as a
// constructed stylesheet, which a strict Content-Security-Policy allows without 'unsafe-inline'.
export const CSS = `
:host { all: initial; }
.root {
  --primary: #1f6feb;
  --on-primary: #fff;
  --surface: #fff;
  --muted: #5b6673;
  --line: #dfe3e8;
  --agent-bubble: #f0f2f5;
  --text: #1b1f24;
  --danger: #b42318;
  position: fixed; bottom: 20px; right: 20px; z-index: 2147483000;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
  color: var(--text);
}
.root.left { right: auto; left: 20px; }
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
.sr-only { position: absolute; width: 1px; height: 1px; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
button { font: inherit; color: inherit; cursor: pointer; }
svg { width: 22px; height: 22px; fill: currentColor; }
:focus-visible { outline: 3px solid #1b1f24; outline: 3px solid color-mix(in srgb, var(--primary) 55%, #000); outline-offset: 2px; }

.launcher {
  position: relative; width: 58px; height: 58px; border-radius: 50%; border: 0;
  background: var(--primary); color: var(--on-primary);
  box-shadow: 0 6px 20px rgba(15, 23, 42, .25); display: grid; place-items: center;
  transition: transform .15s ease;
}
.launcher:hover { transform: scale(1.05); }
.launcher svg { width: 28px; height: 28px; }
.badge {
  position: absolute; top: -4px; right: -4px; min-width: 22px; height: 22px; padding: 0 6px;
  border-radius: 11px; background: var(--danger); color: #fff; font-size: 12px; font-weight: 700;
  display: grid; place-items: center; border: 2px solid #fff;
}

.dialog {
  position: absolute; bottom: 74px; right: 0; width: 380px; height: min(640px, calc(100vh - 110px));
  display: flex; flex-direction: column; background: var(--surface); border-radius: 16px; overflow: hidden;
  box-shadow: 0 12px 48px rgba(15, 23, 42, .28); border: 1px solid var(--line);
}
.root.left .dialog { right: auto; left: 0; }
.header {
  display: flex; align-items: center; gap: 12px; padding: 14px 12px 14px 16px;
  background: var(--primary); color: var(--on-primary);
}
.header .heading { flex: 1; min-width: 0; }
.header h2 { margin: 0; font-size: 17px; font-weight: 650; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.header p { margin: 2px 0 0; font-size: 13px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.header .avatar { border: 2px solid rgba(255,255,255,.7); }
.close { border: 0; background: transparent; color: inherit; width: 40px; height: 40px; border-radius: 50%; display: grid; place-items: center; }
.close:hover { background: rgba(255,255,255,.16); }
.close:focus-visible { outline-color: #fff; }

.banner { padding: 8px 14px; font-size: 13px; background: #fff4e5; color: #7a4100; border-bottom: 1px solid #f5d9b0; }
.unavailable { margin: 16px 14px 0; padding: 12px 14px; border-radius: 12px; background: #f6f8fa; border: 1px solid var(--line); text-align: center; font-size: 14px; }
.sticky { padding: 10px 14px; font-size: 13px; background: #f6f8fa; border-bottom: 1px solid var(--line); color: var(--muted); white-space: pre-wrap; }

.log { flex: 1; overflow-y: auto; padding: 12px 14px 6px; overscroll-behavior: contain; }
.older { text-align: center; font-size: 12px; color: var(--muted); padding: 4px 0 10px; }
.items { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 8px; }
.welcome { align-self: stretch; text-align: center; color: var(--muted); font-size: 14px; padding: 6px 10px 10px; white-space: pre-wrap; }

.msg { display: flex; gap: 8px; align-items: flex-end; max-width: 100%; }
.msg .stack { display: flex; flex-direction: column; max-width: 78%; min-width: 0; }
.msg.visitor { justify-content: flex-end; }
.msg.visitor .stack { align-items: flex-end; }
.msg.system { justify-content: center; }
.msg.system .stack { max-width: 90%; align-items: center; }
.bubble { padding: 8px 12px; border-radius: 16px; overflow-wrap: anywhere; white-space: pre-wrap; }
.agent .bubble { background: var(--agent-bubble); border-bottom-left-radius: 4px; }
.visitor .bubble { background: var(--primary); color: var(--on-primary); border-bottom-right-radius: 4px; }
.system .bubble { background: transparent; color: var(--muted); font-size: 13px; text-align: center; padding: 2px 8px; }
.bubble .title { display: block; font-weight: 650; margin-bottom: 2px; }
.bubble a { color: inherit; }
.author { font-size: 12px; color: var(--muted); margin: 0 0 2px 4px; }
.follows { margin-top: -4px; }
.follows .author { display: none; }
.follows .avatar { visibility: hidden; }
.meta { font-size: 11.5px; color: var(--muted); margin: 2px 4px 0; display: flex; gap: 6px; align-items: center; }
.meta .failed { color: var(--danger); }
.meta button { border: 0; background: none; padding: 0; color: var(--primary); text-decoration: underline; font-size: 11.5px; }
.pending .bubble { opacity: .75; }

.avatar { width: 30px; height: 30px; flex: 0 0 30px; border-radius: 50%; object-fit: cover; background: #c9d1da; color: #27313b; display: grid; place-items: center; font-size: 13px; font-weight: 650; }
.image { display: block; max-width: 100%; max-height: 220px; border-radius: 12px; background: #e9edf1; min-width: 80px; min-height: 60px; border: 1px solid var(--line); }
.bubble.has-image { padding: 4px; background: transparent; }
.visitor .bubble.has-image { background: transparent; }
.file { display: flex; align-items: center; gap: 8px; text-decoration: none; color: inherit; border: 0; background: none; padding: 0; text-align: left; }
.file svg { flex: 0 0 auto; }
.file .name { text-decoration: underline; overflow-wrap: anywhere; }
.file .size { opacity: .8; font-size: 12px; white-space: nowrap; }
.buttons { display: flex; flex-direction: column; gap: 6px; margin-top: 6px; }
.action { display: block; text-align: center; padding: 7px 10px; border-radius: 10px; border: 1px solid var(--primary); color: var(--primary); background: #fff; text-decoration: none; font-size: 14px; }
.action:hover { background: color-mix(in srgb, var(--primary) 8%, #fff); }
.carousel { display: flex; gap: 8px; overflow-x: auto; max-width: 100%; padding-bottom: 4px; }
.card { flex: 0 0 200px; border: 1px solid var(--line); border-radius: 12px; padding: 8px; background: #fff; white-space: normal; }
.card .image { max-height: 120px; width: 100%; object-fit: cover; margin-bottom: 6px; }

.typing { min-height: 22px; font-size: 12.5px; color: var(--muted); padding: 2px 16px 4px; }
.dots { display: inline-flex; gap: 3px; margin-right: 6px; vertical-align: middle; }
.dots i { width: 5px; height: 5px; border-radius: 50%; background: var(--muted); animation: blink 1.2s infinite ease-in-out; }
.dots i:nth-child(2) { animation-delay: .2s; }
.dots i:nth-child(3) { animation-delay: .4s; }
@keyframes blink { 0%, 80%, 100% { opacity: .25; } 40% { opacity: 1; } }
@media (prefers-reduced-motion: reduce) { .dots i { animation: none; } .launcher { transition: none; } }

.quick { display: flex; gap: 6px; flex-wrap: wrap; padding: 0 14px 8px; justify-content: flex-end; }
.chip { border: 1px solid var(--primary); color: var(--primary); background: #fff; border-radius: 16px; padding: 5px 12px; font-size: 14px; }
.composer { display: flex; align-items: flex-end; gap: 6px; padding: 10px; border-top: 1px solid var(--line); background: #fff; }
.composer textarea {
  flex: 1; resize: none; border: 1px solid var(--line); border-radius: 18px; padding: 9px 14px; font: inherit; color: inherit;
  max-height: 120px; min-height: 40px; line-height: 1.4; background: #fff;
}
.composer textarea:disabled { background: #f6f8fa; cursor: not-allowed; }
.composer textarea:focus { outline: 2px solid var(--primary); outline-offset: -1px; border-color: transparent; }
.icon-button { width: 40px; height: 40px; border-radius: 50%; border: 0; display: grid; place-items: center; background: transparent; color: var(--muted); flex: 0 0 40px; }
.icon-button:hover { background: #eef1f4; }
.send { background: var(--primary); color: var(--on-primary); }
.send:hover { background: var(--primary); filter: brightness(1.08); }
.icon-button:disabled { opacity: .45; cursor: default; background: transparent; }
.send:disabled { opacity: .45; cursor: default; filter: none; background: var(--primary); }
.notice { padding: 6px 14px; font-size: 13px; color: var(--danger); }

@media (max-width: 480px) {
  .root { bottom: 14px; right: 14px; }
  .root.left { left: 14px; }
  .root.open { inset: 0; }
  .root.open .launcher { display: none; }
  .root.open .dialog { position: fixed; inset: 0; width: 100%; height: 100%; border-radius: 0; border: 0; }
}
`;

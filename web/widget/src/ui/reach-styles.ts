// The CSS of the pre-chat form, the after-hours notice and the header's reply time (adopted
// with styles.ts's, inside the Shadow DOM).
export const REACH_CSS = `
.header .reply-time { margin: 2px 0 0; font-size: 13px; }
.reach-top:empty, .reach-bottom:empty { display: none; }
.hours-notice { display: flex; gap: 10px; margin: 12px 14px 0; padding: 10px 12px; border-radius: 12px; background: #f3f0ff; border: 1px solid #dcd3fb; color: #2e2160; font-size: 13.5px; }
.hours-notice .moon { font-size: 18px; line-height: 1.2; }
.hours-notice p { margin: 0; }
.hours-notice p + p { margin-top: 2px; color: #4b3f7a; }
.hours-notice .away { font-weight: 600; }
.link-note { margin: 12px 14px 0; padding: 8px 12px; border-radius: 10px; background: #f6f8fa; border: 1px solid var(--line); font-size: 13px; color: var(--muted); }
.reach-bottom { padding: 0 10px 10px; }
.prechat { border: 1px solid var(--line); border-radius: 14px; padding: 12px 14px; background: #fbfcfd; box-shadow: 0 2px 8px rgba(15, 23, 42, .06); }
.prechat h3 { margin: 0 0 2px; font-size: 15px; font-weight: 650; }
.prechat .intro { margin: 0 0 10px; font-size: 13px; color: var(--muted); }
.prechat .field { margin-bottom: 8px; }
.prechat label { display: block; font-size: 13px; font-weight: 600; margin-bottom: 3px; }
.prechat input { width: 100%; font: inherit; color: inherit; padding: 8px 11px; border: 1px solid #b8c0ca; border-radius: 10px; background: #fff; }
.prechat input:focus { outline: 2px solid var(--primary); outline-offset: -1px; border-color: transparent; }
.prechat input[aria-invalid="true"] { border-color: var(--danger); }
.field-error { margin: 3px 0 0; font-size: 12.5px; color: var(--danger); }
.form-status { margin: 0; font-size: 12.5px; color: var(--muted); min-height: 0; }
.form-status:empty { display: none; }
.prechat .actions { display: flex; justify-content: flex-end; align-items: center; gap: 10px; margin-top: 10px; }
.primary-button { border: 0; border-radius: 10px; padding: 8px 16px; background: var(--primary); color: var(--on-primary); font-weight: 600; }
.primary-button:hover { filter: brightness(1.08); }
.primary-button:disabled { opacity: .6; cursor: default; }
.link-button { border: 0; background: none; padding: 6px 4px; color: var(--muted); text-decoration: underline; font-size: 14px; }
.prechat-thanks { margin: 0; padding: 8px 12px; font-size: 13px; color: var(--muted); text-align: center; }
`;

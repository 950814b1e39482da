// "Your account": the signed-in operator's password, two-factor sign-in (enrolment with a QR
// code, recovery codes, turning it off) and sessions. Every route here needs only the session.
import QRCode from 'qrcode';
import { api } from '../api.ts';
import { field, formatTime, h, show } from '../dom.ts';
import type { PageContext } from '../page.ts';
import type { OperatorSession } from '../types.ts';
import { badge, busy, confirm, say, secretBox, statusLine } from '../ui.ts';

export async function mePage(ctx: PageContext): Promise<void> {
  const sessions = h('section', { class: 'card', 'aria-labelledby': 'sessions-title' });
  show(ctx.main, h('h1', {}, 'Your account'), h('p', { class: 'hint' }, ctx.me.email), passwordSection(), twoFactorSection(ctx), sessions);
  await drawSessions(ctx, sessions);
}

function passwordSection(): HTMLElement {
  const current = h('input', { type: 'password', name: 'currentPassword', autocomplete: 'current-password', required: true });
  const next = h('input', { type: 'password', name: 'newPassword', autocomplete: 'new-password', required: true, minlength: 12 });
  const again = h('input', { type: 'password', name: 'again', autocomplete: 'new-password', required: true, minlength: 12 });
  const button = h('button', { type: 'submit' }, 'Change password');
  const status = statusLine();
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'password-title' },
    h('h2', { id: 'password-title' }, 'Password'),
    field('Current password', current),
    field('New password', next, 'At least 12 characters, and not one of the most common passwords. Your other sessions end.'),
    field('New password, again', again),
    button,
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (next.value !== again.value) {
      say(status, 'The two new passwords differ.', 'error');
      again.focus();
      return;
    }
    void busy(button, status, async () => {
      await api.put('/me/password', { currentPassword: current.value, newPassword: next.value });
      form.reset();
      say(status, 'Password changed. Your other sessions have ended.');
    });
  });
  return form;
}

/** The QR code of an otpauth:// address, as an image from an object URL (the page's CSP allows blob: images only). */
async function qrImage(otpauthUrl: string, onLeave: PageContext['onLeave']): Promise<HTMLImageElement> {
  const svg = await QRCode.toString(otpauthUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  onLeave(() => URL.revokeObjectURL(url));
  return h('img', { src: url, class: 'qr', width: 200, height: 200, alt: 'QR code to scan with your authenticator app' });
}

function recoveryCodesBox(codes: string[]): HTMLElement {
  const list = h('ol', { class: 'recovery-codes' }, ...codes.map((code) => h('li', {}, h('code', {}, code))));
  return h(
    'div',
    { class: 'secret-box' },
    h('h3', {}, 'Recovery codes'),
    h(
      'p',
      { class: 'hint' },
      'Shown once: keep them somewhere safe. Each one signs you in once instead of a code, if you lose your authenticator.',
    ),
    list,
    secretBox('Recovery codes', codes.join(' '), 'The same codes on one line, to copy.'),
  );
}

function codeInput(name: string): HTMLInputElement {
  return h('input', { name, autocomplete: 'one-time-code', inputmode: 'numeric', required: true, spellcheck: 'false', maxlength: 64 });
}

function twoFactorSection(ctx: PageContext): HTMLElement {
  const section = h('section', { class: 'card', 'aria-labelledby': 'two-factor-title' });
  const status = statusLine();
  const title = h('h2', { id: 'two-factor-title' }, 'Two-factor sign-in');
  const { enabled, recoveryCodesLeft, requiredBy } = ctx.me.twoFactor;

  if (enabled) {
    const renewCode = codeInput('renewCode');
    const renew = h('button', { type: 'submit', class: 'secondary' }, 'Make new recovery codes');
    const shown = h('div', {});
    const renewForm = h(
      'form',
      { class: 'row end', 'aria-label': 'New recovery codes' },
      field('Code for new recovery codes', renewCode, 'A code from your app; the codes you have stop working.'),
      renew,
    );
    renewForm.addEventListener('submit', (event) => {
      event.preventDefault();
      void busy(renew, status, async () => {
        const answer = await api.post<{ recoveryCodes: string[] }>('/me/two-factor/recovery-codes', { code: renewCode.value.trim() });
        renewForm.reset();
        show(shown, recoveryCodesBox(answer.data.recoveryCodes));
        say(status, 'New recovery codes made; the old ones no longer work.');
      });
    });
    const offCode = codeInput('offCode');
    const off = h('button', { type: 'submit', class: 'danger' }, 'Turn off');
    const offForm = h(
      'form',
      { class: 'row end', 'aria-label': 'Turn off two-factor sign-in' },
      field('Code to turn off', offCode, 'A code from your app, or a recovery code.'),
      off,
    );
    offForm.addEventListener('submit', (event) => {
      event.preventDefault();
      void busy(off, status, async () => {
        if (!(await confirm('Turn off two-factor sign-in', 'Your password alone will sign you in.', 'Turn off'))) return;
        await api.post('/me/two-factor/disable', { code: offCode.value.trim() });
        await ctx.refresh();
      });
    });
    show(
      section,
      title,
      h('p', {}, badge('on', 'ok'), ` Sign-in asks for a code from your authenticator app. Recovery codes left: ${recoveryCodesLeft}.`),
      renewForm,
      shown,
      offForm,
      status,
    );
    return section;
  }

  const start = h('button', { type: 'button' }, 'Set up two-factor sign-in');
  const steps = h('div', {});
  const state = h(
    'p',
    {},
    badge('off', requiredBy.length > 0 ? 'warn' : 'muted'),
    requiredBy.length > 0
      ? ` Required by account${requiredBy.length > 1 ? 's' : ''} ${requiredBy.join(', ')}: your grants there wait until it is on.`
      : ' Your password alone signs you in.',
  );
  start.addEventListener('click', () => {
    void busy(start, status, async () => {
      const enrolment = (await api.post<{ secret: string; otpauthUrl: string }>('/me/two-factor')).data;
      const code = codeInput('code');
      const confirmButton = h('button', { type: 'submit' }, 'Turn on');
      const form = h(
        'form',
        { 'aria-label': 'Confirm two-factor sign-in' },
        h(
          'ol',
          { class: 'steps' },
          h(
            'li',
            {},
            'Scan this QR code with an authenticator app (any app for TOTP codes).',
            h('div', {}, await qrImage(enrolment.otpauthUrl, (cleanup) => ctx.onLeave(cleanup))),
          ),
          h(
            'li',
            {},
            'Or type this key into the app: ',
            h('code', { class: 'totp-secret' }, enrolment.secret.replace(/(.{4})/g, '$1 ').trim()),
          ),
          h('li', {}, field('Code from the app', code, 'The 6 digits the app shows now.')),
        ),
        confirmButton,
      );
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        void busy(confirmButton, status, async () => {
          const answer = await api.post<{ recoveryCodes: string[] }>('/me/two-factor/confirm', { code: code.value.trim() });
          const done = h('button', { type: 'button' }, 'I have kept them');
          done.addEventListener('click', () => void ctx.refresh());
          show(steps, recoveryCodesBox(answer.data.recoveryCodes), done);
          show(state, badge('on', 'ok'), ' Sign-in asks for a code from your authenticator app.');
          say(status, 'Two-factor sign-in is on. Your other sessions have ended.');
          done.focus();
        });
      });
      show(steps, form);
      start.remove();
      code.focus();
    });
  });
  show(section, title, state, start, steps, status);
  return section;
}

function describeAgent(agent: string | null): string {
  if (!agent) return 'unknown';
  return agent.length > 80 ? `${agent.slice(0, 80)}…` : agent;
}

/** The operator's sessions; `notice` is what the last change said, kept across the redraw it causes. */
async function drawSessions(ctx: PageContext, section: HTMLElement, notice?: string): Promise<void> {
  const sessions = (await api.get<OperatorSession[]>('/me/sessions')).data;
  const status = statusLine();
  const rows = sessions.map((s) => {
    const end = h(
      'button',
      {
        type: 'button',
        class: 'small secondary',
        'aria-label': s.current ? 'End this session' : `End the session from ${formatTime(s.createdAt)}`,
      },
      'End',
    );
    end.addEventListener('click', () => {
      void busy(end, status, async () => {
        await api.delete(`/me/sessions/${s.id}`);
        if (s.current) {
          await ctx.refresh();
          return;
        }
        await drawSessions(ctx, section, 'Session ended.');
      });
    });
    return h(
      'tr',
      {},
      h('td', {}, formatTime(s.createdAt), s.current ? ' ' : null, s.current ? badge('this one', 'ok') : null),
      h('td', {}, s.lastUsedAt ? formatTime(s.lastUsedAt) : '—'),
      h('td', {}, s.address ?? 'unknown'),
      h('td', { class: 'agent' }, describeAgent(s.userAgent)),
      h('td', {}, end),
    );
  });
  show(
    section,
    h('h2', { id: 'sessions-title' }, 'Sessions'),
    h('p', { class: 'hint' }, 'Where you are signed in. End any you do not recognise, and change your password.'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'sessions' },
        h('caption', { class: 'visually-hidden' }, 'Your sessions'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Signed in'),
            h('th', { scope: 'col' }, 'Last used'),
            h('th', { scope: 'col' }, 'Address'),
            h('th', { scope: 'col' }, 'Browser'),
            h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
          ),
        ),
        h('tbody', {}, ...rows),
      ),
    ),
    status,
  );
  if (notice) say(status, notice);
}

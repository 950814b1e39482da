// The operator dashboard as browser tests drive it: by the accessible names of its controls.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { adminToken } from './factories.ts';
import { client } from './http.ts';
import { TEST_ADMIN, sharedServer } from './server.ts';

export const DASHBOARD_SHOTS = process.env.DASHBOARD_SHOTS || '/tmp/dashboard-shots';

export async function openDashboard(page: Page, hash = ''): Promise<void> {
  await page.goto(`${sharedServer().url}/dashboard${hash}`);
  // The sign-in page asks the server how operators sign in before it shows anything.
  await page.locator('#app > *').first().waitFor();
}

export async function signIn(page: Page, email = TEST_ADMIN.email, password = TEST_ADMIN.password): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/**
 * Waits until an expression is true in the page, evaluated over the DevTools protocol: the
 * dashboard's CSP (script-src 'self') refuses the eval that waitForFunction() polls with once its
 * first check fails, so a waitForFunction() there passes only when it is true at once.
 */
export async function untilTrue(page: Page, expression: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate<boolean>(expression))) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms: ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An operator with these grants, made through the Admin API; answers their email and password. */
export async function newOperator(
  grants: Array<{ permission: string; accountId: number | null }>,
): Promise<{ email: string; password: string }> {
  const email = `dash-${randomBytes(6).toString('hex')}@palaver.test`;
  const password = 'dashboard password';
  const created = await client(sharedServer().url).post('/adminApi/operators', {
    token: await adminToken(),
    json: { email, password, grants },
  });
  expect(created.status, created.text).to.equal(201);
  return { email, password };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * No serious or critical axe-core violation on the page as it is now. Evaluated over the
 * DevTools protocol, which the page's CSP (script-src 'self') does not govern; a script tag
 * would be refused.
 */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  if (!(await page.evaluate<boolean>(`typeof axe === 'object'`))) await page.evaluate(AXE_SOURCE);
  const { passes, violations } = await page.evaluate<{
    passes: number;
    violations: Array<{ id: string; impact: string; nodes: string[] }>;
  }>(`axe
    .run(document, { resultTypes: ['violations'] })
    .then((result) => ({
      passes: result.passes.length,
      violations: result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + (n.failureSummary || '')),
      })),
    }))`);
  // A check that ran no rule would pass anything.
  expect(passes, `${name}: axe-core checked nothing`).to.be.greaterThan(10);
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious, `${name}: ${JSON.stringify(serious, null, 2)}`).to.deep.equal([]);
}

// In-page, as a string: this suite is typed without the DOM library. Marks every control a
// keyboard user should reach (enabled, shown, not taken out of the tab order) with data-tab.
const MARK_CONTROLS = `(() => {
  const selector = 'a[href], button, input, select, textarea, summary, [tabindex]';
  const controls = [...document.querySelectorAll(selector)].filter(
    (el) => !el.disabled && el.tabIndex >= 0 && el.checkVisibility({ visibilityProperty: true }) && !el.closest('[inert]'),
  );
  controls.forEach((el, n) => el.setAttribute('data-tab', String(n)));
  return controls.length;
})()`;

// The focused control: its mark, and whether its focus is drawn (an outline of 2 px or more).
const FOCUSED = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  const visible = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
  return { mark: el.getAttribute('data-tab'), visible, what: el.outerHTML.slice(0, 120) };
})()`;

/**
 * Tab from the top of the page until focus comes round to the first control again: every
 * control is reached, and every focused control shows a focus outline. (A date and time field
 * takes several presses, one per part.)
 */
export async function expectKeyboardReachable(page: Page, name: string): Promise<void> {
  const count = await page.evaluate<number>(MARK_CONTROLS);
  await page.evaluate(`document.activeElement?.blur(); window.getSelection()?.removeAllRanges()`);
  const reached = new Set<string>();
  let first: string | null = null;
  for (let presses = 0; presses < 10 * count + 10; presses++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate<{ mark: string | null; visible: boolean; what: string } | null>(FOCUSED);
    if (!focused) continue;
    expect(focused.visible, `${name}: no visible focus on ${focused.what}`).to.equal(true);
    if (focused.mark === null) continue;
    if (focused.mark === first && reached.size > 1) break;
    first ??= focused.mark;
    reached.add(focused.mark);
  }
  await page.evaluate(`document.activeElement?.blur()`);
  const missed = await page.evaluate<string[]>(
    `[...document.querySelectorAll('[data-tab]')].filter((el) => !${JSON.stringify([...reached])}.includes(el.getAttribute('data-tab'))).map((el) => el.outerHTML.slice(0, 120))`,
  );
  expect(missed, `${name}: not reached by Tab`).to.deep.equal([]);
}

/**
 * Screenshots at the two widths the dashboard is made for, after checking the page as it is
 * shown: axe-core, and every control reachable by Tab with a visible focus.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  await expectAccessible(page, name);
  await expectKeyboardReachable(page, name);
  for (const width of [1280, 768]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `${DASHBOARD_SHOTS}/${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

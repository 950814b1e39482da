// The operator dashboard as browser tests drive it: by the accessible names of its controls.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { adminToken } from './factories.ts';
import { client } from './http.ts';
import { TEST_ADMIN, sharedServer } from './server.ts';

export const DASHBOARD_SHOTS = process.env.DASHBOARD_SHOTS || '/tmp/dashboard-shots';

export async function openDashboard(page: Page, hash = ''): Promise<void> {
  await page.goto(`${sharedServer().url}/dashboard${hash}`);
}

export async function signIn(page: Page, email = TEST_ADMIN.email, password = TEST_ADMIN.password): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
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

/** Screenshots at the two widths the dashboard is made for. */
export async function screenshots(page: Page, name: string): Promise<void> {
  for (const width of [1280, 768]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `${DASHBOARD_SHOTS}/${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

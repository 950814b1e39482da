// The dashboard's audit log page in a real Chromium: an operator holding audit:read on one
// account sees that account's entries only, filters them, loads more a page at a time and
// downloads the export; keyboard-reachable and axe-clean, looked at at 1280, 768 and 390 px.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { DASHBOARD_SHOTS, newOperator, openDashboard, screenshots, signIn } from '../support/dashboard.ts';
import { adminToken } from '../support/factories.ts';
import { client } from '../support/http.ts';
import { sharedServer } from '../support/server.ts';

const api = () => client(sharedServer().url);

async function rows(page: Page): Promise<number> {
  return page.locator('table.audit tbody tr').count();
}

describe('Operator dashboard: audit log', function () {
  this.timeout(120_000);
  const browser = useBrowser();

  it("shows an account's entries to its audit:read, filters them, loads more and exports them", async () => {
    const token = await adminToken();
    const account = await api().post<{ id: number }>('/adminApi/accounts', { token, json: { name: 'Audit page' } });
    const accountId = account.body.data.id;
    // 55 changes and the creation: a first page of 50, then 6 more.
    for (let n = 0; n < 55; n++) {
      const changed = await api().patch(`/adminApi/accounts/${accountId}`, { token, json: { welcomeMessage: `hello ${n}` } });
      expect(changed.status).to.equal(200);
    }
    const reader = await newOperator([{ permission: 'audit:read', accountId }]);

    const { page } = browser();
    await openDashboard(page);
    await signIn(page, reader.email, reader.password);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await page.locator('table.audit tbody tr').first().waitFor();
    expect(await rows(page)).to.equal(50);
    expect(await page.locator('table.audit tbody tr').first().textContent())
      .to.contain('account.update')
      .and.contain(`account ${accountId}`);

    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByText('56 entries shown.').waitFor();
    expect(await rows(page)).to.equal(56);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).to.equal(0);
    expect(await page.locator('table.audit tbody tr').last().textContent()).to.contain('account.create');
    // Values are never shown: the field's name only.
    expect(await page.locator('table.audit').textContent())
      .to.contain('changed: welcomeMessage')
      .and.not.contain('hello 1');

    await page.getByLabel('Action').fill('account.create');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('1 entry shown.').waitFor();
    await screenshots(page, 'audit');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<number>('document.documentElement.scrollWidth'), 'wider than the screen').to.be.at.most(390);
    await page.screenshot({ path: `${DASHBOARD_SHOTS}/audit-390.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByLabel('Action').fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('50 entries shown; more below.').waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export (JSON lines)' }).click(),
    ]);
    const file = await download.path();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines).to.have.length(56);
    expect(lines.map((l) => (JSON.parse(l) as { accountId: number }).accountId)).to.satisfy((ids: number[]) =>
      ids.every((id) => id === accountId),
    );
    expect(download.suggestedFilename()).to.equal('palaver-audit.ndjson');
  });
});

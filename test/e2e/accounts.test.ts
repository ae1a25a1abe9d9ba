import { describe, expect, it } from 'vitest';
import { consoleSession } from './session.js';

/** The accounts screen's two forms: an admin creates an account and an API token, and a refusal is said in words. */
describe('accounts screen', () => {
  const session = consoleSession();

  it('creates an account and a token from their forms, and says why a weak password is refused', async () => {
    const service = await session.start({});
    const { page } = await session.open(service, '#/accounts');

    await page.fill('#new-account-username', 'reviewer-two');
    await page.fill('#new-account-password', 'short');
    await page.click('#new-account button[type="submit"]');
    await page.locator('.toast-error').waitFor();
    expect(await page.locator('.accounts-list').textContent()).not.toContain('reviewer-two');

    await page.fill('#new-account-password', 'a long enough password');
    await page.click('#new-account button[type="submit"]');
    await page.locator('.accounts-list tr', { hasText: 'reviewer-two' }).waitFor();
    expect(await page.inputValue('#new-account-username')).toBe('');

    await page.fill('#new-token-name', 'nightly export');
    await page.click('#new-token button[type="submit"]');
    const secret = await page.locator('#token-secret').textContent();
    expect(secret?.length).toBeGreaterThan(20);
    await page.locator('.tokens-list tr', { hasText: 'nightly export' }).waitFor();
  });
});

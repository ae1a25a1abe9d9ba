/**
 * The admin token every test env and test server accepts. Its own module, so that a test which only
 * starts a server does not load the env's storage adapters (miniflare among them).
 */
export const TEST_ADMIN_TOKEN = 'test-admin-token-5b1c9e';

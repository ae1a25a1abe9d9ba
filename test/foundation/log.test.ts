import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/log.js';

afterEach(() => vi.restoreAllMocks());

describe('the log', () => {
  it('writes JSON lines with every configured secret value scrubbed', () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    const { config } = buildConfig({ REGIONAL_CLIENT_SECRET: 'regional-secret-9x', GLOBAL_VISION_API_KEY: 'vision-key-7y' });
    const log = createLogger(config);
    log.error('provider failed', { url: 'https://vision.example/v1/images:annotate?key=vision-key-7y', header: 'regional-secret-9x' });
    expect(written).toHaveLength(1);
    const line = JSON.parse(written[0]);
    expect(line).toMatchObject({
      level: 'error',
      message: 'provider failed',
      url: 'https://vision.example/v1/images:annotate?key=[redacted]',
      header: '[redacted]',
    });
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfig, parseDotEnv, publicSettings } from '../../lib/config.js';
import { loadConfig } from '../../lib/config-file.js';

describe('config', () => {
  it('gives every default when nothing is set', () => {
    const { config, warnings } = buildConfig({});
    expect(config.SVC_PORT).toBe(9500);
    expect(config.SVC_HOST).toBe('127.0.0.1');
    expect(config.SVC_TIMEZONE).toBe('Asia/Seoul');
    expect(config.REGIONAL_SEARCH_DISPLAY).toBe(10);
    expect(config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD).toBe(0.9);
    expect(config.SVC_GLOBAL_FACE_CROP_SEARCH).toBe(false);
    expect(config.LOCALLLM_BASE_URL).toBe('http://127.0.0.1:11434');
    expect(config.LOCALLLM_CONNECT_TIMEOUT_MS).toBe(1500);
    expect(config.SVC_MAX_BODY_BYTES).toBe(1048576);
    expect(config.SVC_GLOBAL_CUSTOM_SEARCH_DAILY_LIMIT).toBe(100);
    expect(warnings).toEqual([]);
  });

  it('runs four analysis jobs per core by default, at most 16, and takes a setting in 1-16', () => {
    expect(buildConfig({}, undefined, { cores: 2 }).config.SVC_ANALYSIS_CONCURRENCY).toBe(8);
    expect(buildConfig({}, undefined, { cores: 1 }).config.SVC_ANALYSIS_CONCURRENCY).toBe(4);
    expect(buildConfig({}, undefined, { cores: 64 }).config.SVC_ANALYSIS_CONCURRENCY).toBe(16);
    expect(buildConfig({ SVC_ANALYSIS_CONCURRENCY: '3' }, undefined, { cores: 2 }).config.SVC_ANALYSIS_CONCURRENCY).toBe(3);
    expect(buildConfig({ SVC_ANALYSIS_CONCURRENCY: '99' }, undefined, { cores: 2 }).config.SVC_ANALYSIS_CONCURRENCY).toBe(16);
  });

  it('answers requests in one process per core by default, at most 16, and takes a setting in 1-16', () => {
    expect(buildConfig({}, undefined, { cores: 2 }).config.SVC_HTTP_PROCESSES).toBe(2);
    expect(buildConfig({}, undefined, { cores: 1 }).config.SVC_HTTP_PROCESSES).toBe(1);
    expect(buildConfig({}, undefined, { cores: 64 }).config.SVC_HTTP_PROCESSES).toBe(16);
    expect(buildConfig({ SVC_HTTP_PROCESSES: '1' }, undefined, { cores: 8 }).config.SVC_HTTP_PROCESSES).toBe(1);
    const { config, warnings } = buildConfig({ SVC_HTTP_PROCESSES: 'many' }, undefined, { cores: 4 });
    expect(config.SVC_HTTP_PROCESSES).toBe(4);
    expect(warnings).toEqual(['SVC_HTTP_PROCESSES: not a number, using the default']);
  });

  it('falls back to the default for malformed numbers and booleans, and says so', () => {
    const { config, warnings } = buildConfig({
      SVC_PORT: 'ninety',
      REGIONAL_SEARCH_PAGES: '3pages',
      SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD: 'high',
      SVC_ALLOW_PRIVATE_DOWNLOADS: 'maybe',
      SVC_ENRICH_CONCURRENCY: 'Infinity',
    });
    expect(config.SVC_PORT).toBe(9500);
    expect(config.REGIONAL_SEARCH_PAGES).toBe(1);
    expect(config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD).toBe(0.9);
    expect(config.SVC_ALLOW_PRIVATE_DOWNLOADS).toBe(false);
    expect(config.SVC_ENRICH_CONCURRENCY).toBe(2);
    expect(warnings).toHaveLength(5);
  });

  it('accepts booleans in every documented spelling, in any case', () => {
    for (const yes of ['true', 'TRUE', '1', 'yes', 'On'])
      expect(buildConfig({ SVC_GLOBAL_FACE_CROP_SEARCH: yes }).config.SVC_GLOBAL_FACE_CROP_SEARCH).toBe(true);
    for (const no of ['false', '0', 'NO', 'off']) expect(buildConfig({ SVC_ALLOW_PRIVATE_DOWNLOADS: no }).config.SVC_ALLOW_PRIVATE_DOWNLOADS).toBe(false);
  });

  it('clamps the ranges SPEC.md gives', () => {
    const { config } = buildConfig({
      REGIONAL_SEARCH_PAGES: '50',
      REGIONAL_BLOG_SEARCH_PAGES: '0',
      GLOBAL_CUSTOM_SEARCH_IMAGE_PAGES: '11',
      SVC_AUTO_REGIONAL_QUERY_LIMIT: '99',
      SVC_AUTO_REGIONAL_BLOG_QUERY_LIMIT: '11',
      SVC_AUTO_REGIONAL_WEB_QUERY_LIMIT: '12',
      SVC_AUTO_GLOBAL_CUSTOM_QUERY_LIMIT: '20',
      SVC_SEARCH_RESULT_COMPARE_LIMIT: '500',
      SVC_SEARCH_RESULT_PAGE_IMAGE_LIMIT: '40',
      SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD: '1.7',
      GLOBAL_CUSTOM_SEARCH_IMAGE_RESULTS: '25',
      GLOBAL_CUSTOM_SEARCH_WEB_RESULTS: '0',
      REGIONAL_SEARCH_DISPLAY: '1000',
      REGIONAL_WEB_SEARCH_DISPLAY: '-5',
      SVC_ENRICH_CONCURRENCY: '64',
      SVC_PROVIDER_TIMEOUT_MS: '10',
    });
    expect(config.REGIONAL_SEARCH_PAGES).toBe(10);
    expect(config.REGIONAL_BLOG_SEARCH_PAGES).toBe(1);
    expect(config.GLOBAL_CUSTOM_SEARCH_IMAGE_PAGES).toBe(10);
    expect(config.SVC_AUTO_REGIONAL_QUERY_LIMIT).toBe(10);
    expect(config.SVC_AUTO_REGIONAL_BLOG_QUERY_LIMIT).toBe(10);
    expect(config.SVC_AUTO_REGIONAL_WEB_QUERY_LIMIT).toBe(10);
    expect(config.SVC_AUTO_GLOBAL_CUSTOM_QUERY_LIMIT).toBe(10);
    expect(config.SVC_SEARCH_RESULT_COMPARE_LIMIT).toBe(20);
    expect(config.SVC_SEARCH_RESULT_PAGE_IMAGE_LIMIT).toBe(10);
    expect(config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD).toBe(1);
    expect(buildConfig({ SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD: '-0.2' }).config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD).toBe(0);
    expect(config.GLOBAL_CUSTOM_SEARCH_IMAGE_RESULTS).toBe(10);
    expect(config.GLOBAL_CUSTOM_SEARCH_WEB_RESULTS).toBe(1);
    expect(config.REGIONAL_SEARCH_DISPLAY).toBe(100);
    expect(config.REGIONAL_WEB_SEARCH_DISPLAY).toBe(1);
    expect(config.SVC_ENRICH_CONCURRENCY).toBe(16);
    expect(config.SVC_PROVIDER_TIMEOUT_MS).toBe(1000);
  });

  it('refuses an invalid time zone, URL or sort and keeps the default', () => {
    const { config } = buildConfig({ SVC_TIMEZONE: 'Mars/Olympus', LOCALLLM_BASE_URL: 'file:///etc/passwd', REGIONAL_SEARCH_SORT: 'random' });
    expect(config.SVC_TIMEZONE).toBe('Asia/Seoul');
    expect(config.LOCALLLM_BASE_URL).toBe('http://127.0.0.1:11434');
    expect(config.REGIONAL_SEARCH_SORT).toBe('sim');
  });

  it('reads .env and lets the process environment win', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-env-'));
    const file = join(dir, '.env');
    writeFileSync(file, '# comment\nSVC_PORT=9600\nexport REGIONAL_CLIENT_ID="from-file"\nSVC_TIMEZONE=UTC # trailing\n');
    const { config } = loadConfig({ SVC_PORT: '9700' }, file);
    expect(config.SVC_PORT).toBe(9700);
    expect(config.REGIONAL_CLIENT_ID).toBe('from-file');
    expect(config.SVC_TIMEZONE).toBe('UTC');
  });

  it('starts without a .env file and with a garbled one', () => {
    expect(loadConfig({}, '/nonexistent/.env').config.SVC_PORT).toBe(9500);
    expect(parseDotEnv('\u0000garbage\n=novalue\nSVC_PORT\n')).toEqual({});
  });

  it('never shows secret values in public settings', () => {
    const { config } = buildConfig({
      REGIONAL_CLIENT_SECRET: 's3cret-value',
      GLOBAL_VISION_API_KEY: 'AIza-secret',
      LOCALLLM_BASE_URL: 'http://admin:hunter2@127.0.0.1:11434',
    });
    const shown = JSON.stringify(publicSettings(config));
    expect(shown).not.toContain('s3cret-value');
    expect(shown).not.toContain('AIza-secret');
    expect(shown).not.toContain('hunter2');
    expect(publicSettings(config).LOCALLLM_BASE_URL).toBe('http://127.0.0.1:11434/');
    expect(shown).toContain('SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD');
  });
});

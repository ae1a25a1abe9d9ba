import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RULES } from '../../lib/config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const README = path.join(ROOT, 'README.md');
const DOCS = path.join(ROOT, 'docs');
const README_MAX_LINES = 250;

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

const withoutFences = (markdown: string) => markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');

/** The text a reader sees as prose: fenced blocks and inline code hold examples, not links. */
const withoutCode = (markdown: string) => withoutFences(markdown).replace(/`[^`\n]*`/g, '');

/** Targets of inline links and images, `[text](target "title")`, and of reference definitions. */
function linkTargets(markdown: string): string[] {
  const prose = withoutCode(markdown);
  const inline = [...prose.matchAll(/!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const references = [...prose.matchAll(/^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/gm)].map((m) => m[1]);
  return [...inline, ...references].map((target) => target.replace(/^<|>$/g, ''));
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** GitHub's anchor for a heading: lowercased, punctuation dropped, spaces as dashes, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

/** Every relative link of a page that does not lead to an existing file (or heading): `page -> target`. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const target of linkTargets(readFileSync(file, 'utf8'))) {
    if (isExternal(target)) continue;
    const [pathPart, anchor] = decodeURI(target).split('#', 2);
    const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), pathPart.split('?')[0]);
    const where = `${path.relative(ROOT, file)} -> ${target}`;
    if (!existsSync(resolved)) {
      broken.push(where);
      continue;
    }
    if (anchor && resolved.endsWith('.md') && statSync(resolved).isFile() && !anchors(readFileSync(resolved, 'utf8')).has(anchor)) {
      broken.push(`${where} (no such heading)`);
    }
  }
  return broken;
}

describe('documentation', () => {
  it('documents every configuration variable of lib/config.ts in docs/configuration.md, one table row each', () => {
    const page = readFileSync(path.join(DOCS, 'configuration.md'), 'utf8');
    const variables = Object.keys(RULES);
    expect(variables.length).toBeGreaterThan(40);
    const missing = variables.filter((name) => !new RegExp(`^\\|\\s*\`${name}\`\\s*\\|`, 'm').test(page));
    expect(missing, 'variables in RULES with no row in docs/configuration.md').toEqual([]);
  });

  it('has no broken relative link in README.md or docs/', () => {
    const pages = [README, ...markdownFiles(DOCS)];
    expect(pages.length).toBeGreaterThan(10);
    expect(pages.flatMap(brokenLinks)).toEqual([]);
  });

  it('finds the links it checks, and knows a broken one', () => {
    const readme = linkTargets(readFileSync(README, 'utf8'));
    expect(readme).toContain('docs/configuration.md');
    expect(readme.some((target) => target.startsWith('docs/screenshots/'))).toBe(true);
    expect(linkTargets('[a](missing.md) `[b](in-code.md)` ![c](<with space.png> "title")\n[d]: ref.md')).toEqual(['missing.md', 'with space.png', 'ref.md']);
    expect(anchors('# Title\n## The `ports` table\n## Title\n```\n# not a heading\n```')).toEqual(new Set(['title', 'the-ports-table', 'title-1']));
  });

  it(`keeps README.md to at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(README, 'utf8').replace(/\n$/, '').split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });
});

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startGateway } from '../helpers/gateway';
import { ROOT } from '../helpers/processes';

/**
 * The repository explains itself: a contributor who clones it has the code, `docs/` and the
 * OpenAPI document, not the specification and design notes the first version was written
 * from. Nothing may send them there (the pattern below matches those files' names and the
 * ways they were cited), and every relative link in the Markdown resolves.
 */
const OUTSIDE_DOCUMENT = /spec §|\b(?:API|DESIGN)\.md\b|service-spec|\b[Tt]he spec\b|\bspec's\b/u;

function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file && fs.existsSync(path.join(ROOT, file)) && /\.(ts|js|md|ya?ml|json)$/u.test(file))
    .filter((file) => !file.startsWith('test/deploy/self-contained') && file !== 'package-lock.json' && !file.startsWith('bench/baselines/'));
}

it('no file or OpenAPI text cites a document that is not in the repository', async () => {
  const citing = trackedFiles().filter((file) => OUTSIDE_DOCUMENT.test(fs.readFileSync(path.join(ROOT, file), 'utf8')));
  expect(citing).toEqual([]);
  const gw = await startGateway();
  try {
    const served = await fetch(`${gw.baseUrl}/docs.openapi`);
    expect(await served.text()).not.toMatch(OUTSIDE_DOCUMENT);
  } finally {
    await gw.close();
  }
});

it('every relative link in README.md and docs/ points at a file that exists, and every page is linked', () => {
  const pages = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)];
  const broken: string[] = [];
  const linked = new Set<string>();
  for (const page of pages) {
    const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)\s]*)?\)/gu)) {
      if (/^[a-z]+:/u.test(target)) continue;
      const resolved = path.normalize(path.join(path.dirname(page), target));
      linked.add(resolved);
      if (!fs.existsSync(path.join(ROOT, resolved))) broken.push(`${page} → ${target}`);
    }
  }
  expect(broken).toEqual([]);
  expect(pages.filter((page) => page.startsWith('docs/') && !linked.has(page))).toEqual([]);
});

it('the README fits on two screens', () => {
  expect(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(120);
});

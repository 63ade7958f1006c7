/**
 * Links between the docs: every relative link of README.md and the pages of docs/ that this suite covers points at a
 * file of the repository, and every `#anchor` at a heading of the page it names (GitHub's heading slugs).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { readDoc, ROOT } from './doc-blocks.js';

const PAGES = [
  'README.md',
  'docs/quick-start.md',
  'docs/configuration.md',
  'docs/mtls.md',
  'docs/migrating-from-reference.md',
  'docs/replicas.md',
  'docs/troubleshooting.md',
  'docs/accounts.md',
  'docs/networks.md',
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown text (fenced blocks skipped). */
function anchors(markdown: string): Set<string> {
  const text = markdown.replace(/^```[\s\S]*?^```$/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

test('relative links and anchors of the docs resolve', () => {
  let checked = 0;
  for (const page of PAGES) {
    const text = readDoc(page).replace(/^```[\s\S]*?^```$/gm, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue; // http(s), mailto
      const [file, anchor] = target!.split('#') as [string, string | undefined];
      const path = file === '' ? page : relative(ROOT, join(ROOT, dirname(page), file));
      assert.ok(existsSync(join(ROOT, path)), `${page}: ${target} (${path}) exists`);
      if (anchor !== undefined) assert.ok(anchors(readDoc(path)).has(anchor), `${page}: ${target}: ${path} has a heading #${anchor}`);
      checked++;
    }
  }
  assert.ok(checked > 20, `${checked} links checked`);
});

/**
 * References must lead somewhere. Every text file of the sources, tests, benchmarks, scripts, the dashboard's sources,
 * the contract, the configuration examples, deploy/ and every markdown page is scanned for:
 *
 * - (a) references outside the repository: the background design files (`DESIGN.md`, `REFERENCE.md`), absolute paths
 *   into the build machine's work area (`/work/…`), relative paths that climb out of the repository, and `../shared/`
 *   paths that are no file of it (imports of src/shared/ are);
 * - (b) `docs/….md` pages that do not exist, with their `#anchor` or quoted "section" when one follows, and relative
 *   links of the markdown pages (and their anchors) that do not resolve;
 * - (c) "rule N" citations: each must name docs/architecture.md right beside it, and N must be a rule that page
 *   defines.
 *
 * The paths docs/architecture.md cites (`src/…`, `test/…`) must exist too, so the page cannot point at code that moved.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ROOT } from './doc-blocks.js';

const SELF = relative(ROOT, fileURLToPath(import.meta.url));
const ARCHITECTURE = 'docs/architecture.md';
/** What is scanned: these folders and files, tracked or new (not ignored). */
const SCANNED = [
  'src',
  'test',
  'testkit',
  'bench',
  'scripts',
  'web/src',
  'web/README.md',
  'docs',
  'proto',
  'config',
  'deploy',
  'README.md',
];
const TEXT = new Set(['.ts', '.tsx', '.mts', '.mjs', '.js', '.md', '.proto', '.yaml', '.yml', '.json', '.py', '.sh', '.css', '.html']);
/** Relative paths that climb out of the repository on purpose, with why (file → path). */
const OUTSIDE_ALLOWED: Record<string, string[]> = {
  // Relative to dist/gateway/web/ inside the image, not to the test file.
  'test/deploy/dockerfile.test.ts': ['../../../web/dist'],
};
/** Folders being renamed: architecture.md may name either (new → old). */
const RENAMED: Record<string, string> = { 'src/gateway/replicas': 'src/gateway/cluster' };

interface Source {
  path: string;
  text: string;
}

/** The scanned files, this one excepted (it spells out what it looks for). */
function sources(): Source[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...SCANNED], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return [...new Set(listed.split('\n'))]
    .filter((path) => path !== '' && path !== SELF && !path.startsWith('bench/results/') && TEXT.has(extname(path)))
    .filter((path) => existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile())
    .map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Markdown without its fenced blocks (their lines kept empty, so line numbers still count). */
function withoutFences(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```$/gm, (block) => block.replace(/[^\n]/g, ''));
}

/** The headings of a markdown page (fenced blocks skipped). */
function headings(markdown: string): string[] {
  return [...withoutFences(markdown).matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!.trim());
}

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** Whether `path` (relative to the root, as written) names a file or folder of the repository; `.js` may be a `.ts`. */
function existsInRepo(path: string): boolean {
  const full = join(ROOT, path);
  return [full, full.replace(/\.js$/, '.ts'), full.replace(/\.js$/, '.tsx')].some((p) => existsSync(p));
}

/** The rules docs/architecture.md defines: number → heading anchor. */
function definedRules(): Map<number, string> {
  const page = readFileSync(join(ROOT, ARCHITECTURE), 'utf8');
  const start = page.indexOf('\n## The rules');
  assert.ok(start >= 0, `${ARCHITECTURE} has a "## The rules" section`);
  const section = page.slice(start + 1).split(/\n## /)[0]!;
  return new Map([...section.matchAll(/^### (\d+)\. (.+)$/gm)].map((m) => [Number(m[1]), slug(`${m[1]}. ${m[2]}`)]));
}

/** Checks a markdown page `page` (relative to the root) has the anchor / a section named `section`. */
function sectionProblem(page: string, anchor: string | undefined, section: string | undefined): string | undefined {
  if (!page.endsWith('.md') || !existsSync(join(ROOT, page))) return undefined;
  const markdown = readFileSync(join(ROOT, page), 'utf8');
  const titles = headings(markdown);
  if (anchor !== undefined && !titles.some((h) => slug(h) === anchor)) return `${page} has no heading #${anchor}`;
  if (section !== undefined) {
    const wanted = section.toLowerCase();
    const bold = new RegExp(`\\*\\*${section.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'i');
    if (!titles.some((h) => h.toLowerCase().includes(wanted)) && !bold.test(markdown)) return `${page} has no section "${section}"`;
  }
  return undefined;
}

/** (a) References outside the repository. */
function outsideProblems(source: Source): string[] {
  const problems: string[] = [];
  const at = (index: number, message: string) => problems.push(`${source.path}:${lineOf(source.text, index)}: ${message}`);
  for (const m of source.text.matchAll(/\b(?:DESIGN|REFERENCE)\.md\b/g)) at(m.index, `${m[0]} is not a file of this repository`);
  for (const m of source.text.matchAll(/(?<![\w.~/-])\/work\/[\w.-]+/g)) at(m.index, `${m[0]}… is a path outside the repository`);
  for (const m of source.text.matchAll(/(?<![\w./-])(?:\.\.\/)+[\w.@-][^\s'"`)\]#,;:<>]*/g)) {
    const path = m[0].replace(/\.$/, '');
    const target = relative(ROOT, resolve(ROOT, dirname(source.path), path));
    if (target.startsWith('..')) {
      if (!OUTSIDE_ALLOWED[source.path]?.includes(path)) at(m.index, `${path} leads outside the repository`);
    } else if (/(?:^|\/)shared\//.test(path) && !existsInRepo(target)) {
      at(m.index, `${path} is no file of the repository (${target})`);
    }
  }
  return problems;
}

/** (b) docs pages, anchors and sections named anywhere, and the relative links of markdown pages. */
function docsProblems(source: Source): string[] {
  const problems: string[] = [];
  const at = (index: number, message: string) => problems.push(`${source.path}:${lineOf(source.text, index)}: ${message}`);
  const named = /(?<![\w./-])(?:\.\.\/)*(docs\/[\w.-]+(?:\/[\w.-]+)*\.md)(?:#([\w-]+))?(?:(?:,\s*|\s+\(?)"([^"\n]{2,80})")?/g;
  for (const m of source.text.matchAll(named)) {
    const [, page, anchor, section] = m as unknown as [string, string, string | undefined, string | undefined];
    if (!existsSync(join(ROOT, page))) at(m.index, `${page} does not exist`);
    else {
      const problem = sectionProblem(page, anchor, section);
      if (problem) at(m.index, problem);
    }
  }
  if (source.path.endsWith('.md')) {
    const text = withoutFences(source.text);
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http(s), mailto
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const path = file === '' ? source.path : relative(ROOT, resolve(ROOT, dirname(source.path), decodeURI(file)));
      if (path.startsWith('..') || !existsSync(join(ROOT, path))) at(m.index, `link ${target} leads to no file (${path})`);
      else {
        const problem = sectionProblem(path, anchor, undefined);
        if (problem) at(m.index, `link ${target}: ${problem}`);
      }
    }
  }
  return problems;
}

/**
 * Whether the citation at `start`–`end` names architecture.md right beside it: within a few characters before
 * ("docs/architecture.md, rule 4") or after ("rule 7 of docs/architecture.md", "[rule 7](architecture.md#…)"), with no
 * other rule or design page in between.
 */
function namesArchitecture(text: string, start: number, end: number): boolean {
  for (const a of text.matchAll(/architecture\.md/g)) {
    const gap = a.index < start ? text.slice(a.index + a[0].length, start) : text.slice(end, a.index);
    if (gap.length <= 40 && !/\brules?\s+\d/i.test(gap) && !/DESIGN/.test(gap)) return true;
  }
  return false;
}

/** (c) "rule N" citations. */
function ruleProblems(source: Source, rules: Map<number, string>): string[] {
  const problems: string[] = [];
  for (const m of source.text.matchAll(/\brules?\s+(\d+(?:\s*(?:,|and|or|to|–)\s*\d+)*)\b/gi)) {
    const where = `${source.path}:${lineOf(source.text, m.index)}`;
    if (source.path !== ARCHITECTURE && !namesArchitecture(source.text, m.index, m.index + m[0].length)) {
      problems.push(`${where}: "${m[0]}" cites a rule without naming ${ARCHITECTURE}`);
      continue;
    }
    for (const n of m[1]!.match(/\d+/g)!.map(Number)) {
      if (!rules.has(n))
        problems.push(`${where}: "${m[0]}": ${ARCHITECTURE} defines no rule ${n} (it has ${[...rules.keys()].join(', ')})`);
    }
  }
  return problems;
}

test('docs/architecture.md defines its rules as numbered headings, 1 to N without gaps', () => {
  const rules = definedRules();
  assert.ok(rules.size >= 11, `${rules.size} rules`);
  assert.deepEqual(
    [...rules.keys()],
    [...rules.keys()].map((_, i) => i + 1),
  );
});

test('no reference leads outside the repository, to a missing docs page or section, or to an undefined rule', () => {
  const rules = definedRules();
  const all = sources();
  assert.ok(all.length > 300, `${all.length} files scanned`);
  assert.ok(
    all.some((s) => s.path === 'docs/architecture.md'),
    'the docs are scanned',
  );
  const problems = all.flatMap((source) => [...outsideProblems(source), ...docsProblems(source), ...ruleProblems(source, rules)]);
  assert.deepEqual(problems, []);
});

test('the paths docs/architecture.md cites exist', () => {
  const page = readFileSync(join(ROOT, ARCHITECTURE), 'utf8');
  const cited = [...page.matchAll(/`((?:src|test|proto|web|deploy|drizzle|bench)\/[^`\s]*)`/g)].map((m) => m[1]!.replace(/\/$/, ''));
  assert.ok(cited.length > 30, `${cited.length} paths cited`);
  const missing = cited.filter((path) => {
    const renamedFrom = Object.entries(RENAMED).find(([to]) => path === to || path.startsWith(`${to}/`));
    const old = renamedFrom ? path.replace(renamedFrom[0], renamedFrom[1]) : undefined;
    return !existsInRepo(path) && !(old !== undefined && existsInRepo(old));
  });
  assert.deepEqual(missing, []);
});

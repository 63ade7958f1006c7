/**
 * Reads a page of docs/ and hands its fenced blocks to the tests that run them, so a page and its test cannot drift:
 * the test executes or loads what the page shows, not a copy of it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository root (ends with /). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One fenced block: its language, its text, and the `<!-- marker -->` comment right above it (if any). */
export interface DocBlock {
  lang: string;
  text: string;
  /** The text of an HTML comment on the line(s) just before the fence, e.g. `reproduced: wrong-token`. */
  marker?: string;
}

/** The text of `docs/<name>` (or any path relative to the root). */
export function readDoc(path: string): string {
  return readFileSync(`${ROOT}${path}`, 'utf8');
}

/** Every fenced block of a markdown text, in order. */
export function fencedBlocks(markdown: string): DocBlock[] {
  return [...markdown.matchAll(/(?:<!--\s*([\s\S]*?)\s*-->\n)?^```(\S*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[2]!,
    text: m[3]!,
    ...(m[1] !== undefined ? { marker: m[1] } : {}),
  }));
}

/** The blocks of one language. */
export function blocksOf(markdown: string, lang: string): DocBlock[] {
  return fencedBlocks(markdown).filter((b) => b.lang === lang);
}

/** Shell commands of `sh` blocks: comments dropped, `\` continuations joined, one command per entry. */
export function shellCommands(text: string): string[] {
  return text
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/(^|\s)#\s.*$/, '').trim())
    .filter((line) => line !== '');
}

/**
 * The body rows of the first markdown table after `marker` in `markdown`, as trimmed cells (the header and its
 * separator dropped). Fails the calling test when the marker is missing.
 */
export function tableAfter(markdown: string, marker: string, page = 'the page'): string[][] {
  const at = markdown.indexOf(marker);
  if (at < 0) throw new Error(`${page} has no "${marker}"`);
  const lines = markdown.slice(at).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
  }
  return rows.slice(2);
}

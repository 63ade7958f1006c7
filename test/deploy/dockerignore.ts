/**
 * `.dockerignore` matching as BuildKit does it (moby's patternmatcher): patterns are cleaned paths relative to the
 * context root, `*` and `?` stay inside one path segment, `**` spans any number of segments, `!` re-includes, the
 * last pattern that matches a path or one of its parent directories decides. Tests use it to check that every COPY
 * source is actually sent to the builder.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';

interface Pattern {
  negated: boolean;
  regex: RegExp;
  source: string;
}

function toRegex(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '*') {
      if (pattern[i + 1] === '*') {
        i++;
        if (pattern[i + 1] === '/') {
          i++;
          out += '(?:.*/)?';
        } else out += '.*';
      } else out += '[^/]*';
    } else if (ch === '?') out += '[^/]';
    else if (ch === '\\' && i + 1 < pattern.length) out += `\\${pattern[++i]}`;
    else out += /[.+^${}()|[\]\\]/.test(ch) ? `\\${ch}` : ch;
  }
  return new RegExp(`^${out}$`);
}

/** Parses `.dockerignore` text: comments and blank lines dropped, leading `/` and `./` removed, paths cleaned. */
export function parseDockerignore(text: string): Pattern[] {
  const patterns: Pattern[] = [];
  for (const raw of text.split('\n')) {
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    if (negated) line = line.slice(1).trim();
    line = posix.normalize(line).replace(/^\/+/, '').replace(/\/+$/, '');
    if (line === '.' || line === '') continue;
    patterns.push({ negated, regex: toRegex(line), source: raw.trim() });
  }
  return patterns;
}

/** True when the context path (relative, `/`-separated) is left out of the build context. */
export function isIgnored(patterns: Pattern[], path: string): boolean {
  const segments = posix.normalize(path).replace(/^\/+/, '').split('/');
  const candidates = segments.map((_, i) => segments.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const pattern of patterns) {
    if (candidates.some((c) => pattern.regex.test(c))) ignored = !pattern.negated;
  }
  return ignored;
}

/** Every file under `root` (relative paths) that the patterns let into the context; skips ignored directories' contents only file by file, as the builder does. */
export function contextFiles(root: string, patterns: Pattern[], dir = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.name === '.git' || entry.name === 'node_modules') {
      if (!isIgnored(patterns, rel)) out.push(rel); // reported, not walked: large, and never wanted in the context
      continue;
    }
    if (entry.isDirectory()) out.push(...contextFiles(root, patterns, rel));
    else if (statSync(join(root, rel)).isFile() && !isIgnored(patterns, rel)) out.push(rel);
  }
  return out;
}

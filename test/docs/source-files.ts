/**
 * The source files the structure tests scan (one owner per table, the direction of imports): every TypeScript file
 * under a root's src/, generated code aside, as repository paths with forward slashes, in a stable order.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Every source file under `root`/src (src/gen aside). */
export function sourceFiles(root: string, dir = join(root, 'src')): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    const rel = relative(root, path).split(sep).join('/');
    if (rel === 'src/gen' || entry === 'node_modules') continue;
    if (statSync(path).isDirectory()) files.push(...sourceFiles(root, path));
    else if (/\.(ts|tsx|mts|cts)$/.test(entry)) files.push(rel);
  }
  return files;
}

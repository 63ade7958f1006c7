/**
 * Renders the kustomizations under deploy/ with the real kubectl (`kubectl kustomize`, kustomize built in) and finds
 * objects in the result. Overlays are discovered from the tree, so a new overlay is rendered and applied by the tests
 * without being listed anywhere.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

/** The repository root (ends with /). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The kubectl the tests render and apply with. */
export const KUBECTL = '/usr/bin/kubectl';

/** A rendered object, loosely typed: tests read what they check. */
export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: any;
};

/** `deploy/<program>/overlays/<name>` for every overlay in the tree, relative to the root. */
export function overlayDirs(): string[] {
  const out: string[] = [];
  for (const program of readdirSync(join(ROOT, 'deploy'), { withFileTypes: true })) {
    const overlays = join(ROOT, 'deploy', program.name, 'overlays');
    if (!program.isDirectory() || !existsSync(overlays)) continue;
    for (const overlay of readdirSync(overlays, { withFileTypes: true })) {
      if (overlay.isDirectory()) out.push(`deploy/${program.name}/overlays/${overlay.name}`);
    }
  }
  return out.sort();
}

/** Runs `kubectl kustomize DIR` and returns the YAML text; rejects with kubectl's error output. */
export function kustomize(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(KUBECTL, ['kustomize', join(ROOT, dir)], { timeout: 30_000, maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`kubectl kustomize ${dir} failed: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

/** Parses multi-document YAML into objects (empty documents dropped). */
export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors[0]!.message}`);
      return doc.toJS() as Manifest | null;
    })
    .filter((o): o is Manifest => o !== null);
}

/** The one object of a kind (and name, when given); throws listing what there is when it is missing or ambiguous. */
export function findOne(objects: Manifest[], kind: string, name?: string): Manifest {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) {
    throw new Error(
      `expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`,
    );
  }
  return found[0]!;
}

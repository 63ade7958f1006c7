/**
 * docs/architecture.md is the map of the code: every folder of src/, at every depth, is cited there as a folder
 * (`` `src/gateway/kube/` ``, in backticks, with its trailing slash) so a reader finds what each is for. This test walks
 * src/ and fails naming each folder the page does not cite, so a new folder comes with its sentence. The folders of
 * the generated code under src/gen/ are left out: they are the protobuf packages of proto/, which the page cites as
 * `src/gen/`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from './doc-blocks.js';

const PAGE = 'docs/architecture.md';
/** Folders whose subfolders are not listed: generated code. */
const NOT_DESCENDED = new Set(['src/gen']);

/** Every folder under `dir` (a path from the repository root), `dir` included, sorted. */
function foldersOf(dir: string, out: string[] = []): string[] {
  out.push(dir);
  if (NOT_DESCENDED.has(dir)) return out;
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    if (entry.isDirectory() && !entry.name.startsWith('.')) foldersOf(`${dir}/${entry.name}`, out);
  }
  return out.sort();
}

test('docs/architecture.md cites every folder of src/', () => {
  const folders = foldersOf('src');
  // The walk itself: it must see the nested folders, or the check below proves nothing.
  for (const known of ['src/agent/stream', 'src/gateway/kube', 'src/gateway/spinnaker/ops', 'src/gen']) {
    assert.ok(folders.includes(known), `the walk of src/ missed ${known}`);
  }
  assert.ok(!folders.some((f) => f.startsWith('src/gen/')), 'generated folders are not listed');

  const page = readFileSync(join(ROOT, PAGE), 'utf8');
  const missing = folders.filter((folder) => !page.includes(`\`${folder}/\``));
  assert.deepEqual(missing, [], `${PAGE} does not cite these folders of src/ (as \`path/\`): ${missing.join(', ')}`);
});

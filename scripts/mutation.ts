/**
 * `npm run mutation [-- --only a,b]`: mutation testing of the modules in mutation/modules.json (docs/mutation.md).
 * For each module, Stryker 8 with its command runner mutates the module's files in a sandbox copy of the repository
 * and runs the module's test files against each mutant (`node --import tsx --test …`, PGlite only); its JSON report
 * gives the mutants by status. The results go to mutation/results.json (the modules not run keep their last result)
 * and docs/mutation.md is rendered from them (`--render` renders it alone). Exits 1 when a module run fails or scores under 90 %.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  type EquivalentMutant,
  type ModuleResult,
  type MutationModule,
  moduleHash,
  readModules,
  readResults,
  renderMutationPage,
  scoreOf,
} from './mutation-results.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORK = 'mutation/.work';
const THRESHOLD = 90;

/** The part of Stryker's JSON report (mutation-testing-report-schema) read here. */
interface StrykerReport {
  files: Record<
    string,
    {
      mutants: {
        mutatorName: string;
        replacement?: string;
        location: { start: { line: number } };
        status: string;
        statusReason?: string;
      }[];
    }
  >;
}

const USAGE = [
  'usage: npm run mutation [-- --only NAME[,NAME…]]   run Stryker on every module, or on the named ones',
  '       npm run mutation -- --render               rewrite docs/mutation.md from mutation/results.json, no run',
  'modules: mutation/modules.json; results: mutation/results.json; page: docs/mutation.md',
].join('\n');
const options = { only: { type: 'string' }, render: { type: 'boolean' }, help: { type: 'boolean' } } as const;
let values: ReturnType<typeof parseArgs<{ options: typeof options }>>['values'];
try {
  ({ values } = parseArgs({ options }));
} catch (err) {
  console.error(`mutation: ${(err as Error).message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const modules = readModules(ROOT);
if (values.render) {
  // After merging two branches' results.json: the page is only ever rendered from the results, never edited.
  writeFileSync(join(ROOT, 'docs/mutation.md'), renderMutationPage(modules, readResults(ROOT)));
  process.exit(0);
}
const only = values.only?.split(',').map((s) => s.trim());
const unknown = (only ?? []).filter((n) => !modules.some((m) => m.name === n));
if (unknown.length > 0) {
  console.error(`mutation: unknown module ${unknown.join(', ')}; known: ${modules.map((m) => m.name).join(', ')}`);
  process.exit(2);
}
const chosen = only ? modules.filter((m) => only.includes(m.name)) : modules;
mkdirSync(join(ROOT, WORK), { recursive: true });
takeLock();

/**
 * One run per tree: runs share the sandbox, and each reads results.json at its start and writes it whole, so a second
 * one would undo the first's results. The lock names its pid; a lock whose process is gone is taken over.
 */
function takeLock(): void {
  const lock = join(ROOT, WORK, 'run.lock');
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx' });
  } catch {
    const holder = Number(readFileSync(lock, 'utf8'));
    let alive = false;
    try {
      process.kill(holder, 0);
      alive = true;
    } catch {}
    if (alive) {
      console.error(`mutation: another run (pid ${holder}) is going on in this tree; wait for it (or remove ${WORK}/run.lock)`);
      process.exit(2);
    }
    writeFileSync(lock, String(process.pid));
  }
  process.on('exit', () => rmSync(lock, { force: true }));
}
const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() || 'unknown';
/** HEAD, with `+` when the module's files or tests had uncommitted changes (they were measured as they were). */
const commitOf = (module: MutationModule): string => {
  const dirty = spawnSync('git', ['status', '--porcelain', '--', ...module.files, ...module.tests], { cwd: ROOT, encoding: 'utf8' });
  return dirty.stdout.trim() === '' ? head : `${head}+`;
};

/** Runs Stryker on one module; returns its result, or undefined when the run itself failed. */
function runModule(module: MutationModule): ModuleResult | undefined {
  const reportFile = `${WORK}/${module.name}.json`;
  const config = {
    testRunner: 'command',
    commandRunner: { command: `node --import tsx --test --test-reporter=dot ${module.tests.join(' ')}` },
    mutate: module.files,
    coverageAnalysis: 'off',
    reporters: ['json', 'progress'],
    jsonReporter: { fileName: reportFile },
    tempDirName: `${WORK}/sandbox`,
    ignorePatterns: ['test-output', 'bench/results', 'dist', 'web/dist', '.outpost', WORK, 'docs'],
    concurrency: 2,
    timeoutMS: 20_000,
    cleanTempDir: 'always',
  };
  const configFile = `${WORK}/${module.name}.stryker.json`;
  writeFileSync(join(ROOT, configFile), `${JSON.stringify(config, null, 2)}\n`);
  const env = { ...process.env };
  delete env.OUTPOST_TEST_POSTGRES; // one driver: half the time per mutant
  console.log(`mutation: ${module.name} (${module.files.join(', ')}) against ${module.tests.length} test file(s)`);
  const run = spawnSync('npx', ['stryker', 'run', configFile], { cwd: ROOT, env, stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(`mutation: stryker failed on ${module.name} (exit ${run.status})`);
    return undefined;
  }
  const report = JSON.parse(readFileSync(join(ROOT, reportFile), 'utf8')) as StrykerReport;
  const count = { killed: 0, timedOut: 0, survived: 0, noCoverage: 0, errors: 0 };
  const equivalent: EquivalentMutant[] = [];
  const survivors: string[] = [];
  for (const [file, { mutants }] of Object.entries(report.files)) {
    for (const m of mutants) {
      const where = `${file}:${m.location.start.line}`;
      if (m.status === 'Killed') count.killed++;
      else if (m.status === 'Timeout') count.timedOut++;
      else if (m.status === 'Survived') {
        count.survived++;
        survivors.push(`${where} ${m.mutatorName} → ${m.replacement ?? ''}`.replace(/\s+/g, ' '));
      } else if (m.status === 'NoCoverage') count.noCoverage++;
      else if (m.status === 'Ignored') {
        equivalent.push({
          file,
          line: m.location.start.line,
          mutator: m.mutatorName,
          replacement: m.replacement ?? '',
          reason: m.statusReason ?? '',
        });
      } else count.errors++;
    }
  }
  return {
    name: module.name,
    hash: moduleHash(ROOT, module),
    date: new Date().toISOString().slice(0, 10),
    commit: commitOf(module),
    ...count,
    equivalent,
    survivors,
    score: scoreOf(count),
  };
}

const results = readResults(ROOT);
let failed = false;
for (const module of chosen) {
  const result = runModule(module);
  if (!result) {
    failed = true;
    continue;
  }
  results.modules = [...results.modules.filter((r) => r.name !== module.name), result].sort((a, b) => a.name.localeCompare(b.name));
  writeFileSync(join(ROOT, 'mutation/results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(ROOT, 'docs/mutation.md'), renderMutationPage(modules, results));
  console.log(
    `mutation: ${module.name} ${result.score} % (${result.survivors.length} survivor(s), ${result.equivalent.length} equivalent)`,
  );
  for (const s of result.survivors) console.log(`  survived: ${s}`);
  if (result.score < THRESHOLD || result.survivors.length > 0) failed = true;
}
process.exit(failed ? 1 : 0);

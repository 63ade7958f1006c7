/**
 * No Docker engine runs here, so the Dockerfile is checked by reading it: the stages it names are used, every COPY
 * from the build context exists and survives .dockerignore, the build stage holds what `npm run build` reads, the
 * runtime stage copies only what `npm run build` (per tsconfig.build.json, scripts/stamp-build.mjs and
 * web/vite.config.ts) and `npm ci` produce, the layout matches the paths the program resolves at run time, the user
 * is a numeric non-root id, and the entrypoint and health check point at files the image holds.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { execForm, parseDockerfile, type Stage } from './dockerfile-parse.js';
import { contextFiles, isIgnored, parseDockerignore } from './dockerignore.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');
const dockerfile = parseDockerfile(read('Dockerfile'));
const ignore = parseDockerignore(read('.dockerignore'));
const pkg = JSON.parse(read('package.json')) as { license: string; version: string; scripts: Record<string, string> };

const stageNamed = (name: string): Stage => {
  const stage = dockerfile.stages.find((s) => s.name === name);
  assert.ok(stage, `a stage named ${name}`);
  return stage;
};
const runtime = dockerfile.stages[dockerfile.stages.length - 1]!;
const runs = (stage: Stage) => stage.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
const labels = (stage: Stage) => {
  const out = new Map<string, string>();
  for (const i of stage.instructions.filter((x) => x.keyword === 'LABEL')) {
    for (const m of i.args.matchAll(/([\w.-]+)="([^"]*)"/g)) out.set(m[1]!, m[2]!);
  }
  return out;
};

/** Where a COPY lands: `dest` is a directory (ends with / or has several sources) or the file itself. */
function landing(stage: Stage, source: string, dest: string, manySources: boolean): string {
  const absDest = dest.startsWith('/') ? dest : posix.join(stage.workdir, dest);
  return dest.endsWith('/') || manySources ? posix.join(absDest, posix.basename(source)) : absDest;
}

describe('Dockerfile', () => {
  test('is multi-stage: a build stage and a runtime stage, each named stage used by a later one', () => {
    assert.ok(dockerfile.stages.length >= 2, 'at least two stages');
    assert.equal(runtime.name, 'runtime');
    const names = dockerfile.stages.map((s) => s.name);
    dockerfile.stages.forEach((stage, index) => {
      for (const copy of stage.copies.filter((c) => c.from !== undefined)) {
        assert.ok(names.slice(0, index).includes(copy.from), `line ${copy.line}: --from=${copy.from} names an earlier stage`);
      }
      if (stage !== runtime) {
        assert.ok(stage.name, `stage ${index} has a name`);
        const used = dockerfile.stages.slice(index + 1).some((later) => later.copies.some((c) => c.from === stage.name));
        assert.ok(used, `stage ${stage.name} is copied from by a later stage`);
      }
    });
    for (const stage of dockerfile.stages)
      assert.match(stage.base, /^node:20[.-]/, `${stage.name} is a Node 20 image (code needs >= 20.19)`);
  });

  test('every COPY from the build context exists and is sent to the builder (.dockerignore)', () => {
    const sent = new Set(contextFiles(ROOT, ignore));
    let checked = 0;
    for (const stage of dockerfile.stages) {
      for (const copy of stage.copies.filter((c) => c.from === undefined)) {
        for (const source of copy.sources) {
          const path = posix.normalize(source).replace(/\/$/, '');
          assert.ok(existsSync(`${ROOT}${path}`), `line ${copy.line}: ${source} exists in the repository`);
          if (statSync(`${ROOT}${path}`).isDirectory()) {
            const inside = [...sent].filter((f) => f.startsWith(`${path}/`));
            assert.ok(inside.length > 0, `line ${copy.line}: files of ${source}/ are in the build context`);
          } else {
            assert.ok(!isIgnored(ignore, path), `line ${copy.line}: ${source} is not excluded by .dockerignore`);
          }
          checked++;
        }
      }
    }
    assert.ok(checked >= 8, `${checked} context sources checked`);
    // and nothing that must stay out gets in
    for (const path of [
      'node_modules',
      '.git',
      'dist/cli/main.js',
      'web/dist/index.html',
      'test/deploy/dockerfile.test.ts',
      'src/sandbox/kinds.test.ts',
      '.outpost/demo',
    ]) {
      assert.ok(isIgnored(ignore, path), `${path} is left out of the context`);
    }
  });

  test('the build stage holds every file `npm run build` reads before running it, then prunes dev dependencies', () => {
    const build = stageNamed('build');
    const commands = runs(build).join(' && ');
    const order = ['npm ci', 'npm run build', 'npm prune --omit=dev'].map((c) => commands.indexOf(c));
    assert.ok(
      order.every((i) => i >= 0),
      `build stage runs npm ci, npm run build, npm prune --omit=dev: ${commands}`,
    );
    assert.deepEqual(
      [...order].sort((a, b) => a - b),
      order,
      'in that order',
    );

    assert.match(pkg.scripts.build!, /npm run build:server/);
    assert.match(pkg.scripts.build!, /npm run build:web/);
    const inputs = ['package.json', 'package-lock.json'];
    const tsc = /tsc -p (\S+)/.exec(pkg.scripts['build:server']!);
    assert.ok(tsc, 'build:server runs tsc -p <config>');
    const tsconfig = JSON.parse(read(tsc[1]!)) as { extends?: string; include: string[] };
    inputs.push(tsc[1]!, ...(tsconfig.extends ? [posix.normalize(tsconfig.extends)] : []), ...tsconfig.include);
    for (const m of pkg.scripts['build:server']!.matchAll(/node (\S+\.mjs)/g)) inputs.push(m[1]!);
    const vite = /vite build --config (\S+)/.exec(pkg.scripts['build:web']!);
    assert.ok(vite, 'build:web runs vite build --config <file>');
    inputs.push(posix.dirname(vite[1]!));

    const buildRun = build.instructions.findIndex((i) => i.keyword === 'RUN' && i.args.includes('npm run build'));
    const copiedBefore = build.instructions
      .slice(0, buildRun)
      .filter((i) => i.keyword === 'COPY')
      .flatMap((i) => build.copies.find((c) => c.line === i.line)!.sources.map((s) => posix.normalize(s).replace(/\/$/, '')));
    for (const input of inputs) {
      assert.ok(
        copiedBefore.some((c) => input === c || input.startsWith(`${c}/`)),
        `${input} (read by npm run build) is copied before it runs`,
      );
    }
  });

  test('the runtime stage copies only what the build produces, where the program looks for it at run time', async () => {
    const build = stageNamed('build');
    // What `npm run build` writes, from its own configuration.
    const tsconfig = JSON.parse(read('tsconfig.build.json')) as { compilerOptions: { outDir: string; rootDir: string } };
    const serverOut = posix.normalize(tsconfig.compilerOptions.outDir);
    assert.match(read('scripts/stamp-build.mjs'), /\.\.\/dist\/\.build-stamp/, 'the stamp is written into dist/');
    const viteConfig = (await import('../../web/vite.config.js')).default as { root: string; build: { outDir: string } };
    const webOut = relative(ROOT, viteConfig.build.outDir).split('\\').join('/');
    assert.ok(existsSync(`${viteConfig.root}/index.html`), 'the dashboard entry web/index.html exists');
    const produced = new Map<string, string>([
      [serverOut, 'tsc (tsconfig.build.json outDir)'],
      [webOut, 'vite (web/vite.config.ts build.outDir)'],
      ['node_modules', 'npm ci, pruned'],
    ]);
    for (const copy of build.copies.filter((c) => c.from === undefined))
      for (const s of copy.sources) produced.set(posix.normalize(s).replace(/\/$/, ''), 'copied in');

    const image = new Map<string, string>(); // path in the image → what it holds
    for (const copy of runtime.copies) {
      for (const source of copy.sources) {
        const target = landing(runtime, source, copy.dest, copy.sources.length > 1);
        if (copy.from === 'build') {
          const inBuild = posix.relative(build.workdir, source).replace(/\/$/, '');
          assert.ok(
            produced.has(inBuild),
            `line ${copy.line}: ${source} is produced in the build stage (${[...produced.keys()].join(', ')})`,
          );
          image.set(target, inBuild);
        } else {
          image.set(target, posix.normalize(source).replace(/\/$/, ''));
        }
      }
    }
    assert.equal(runtime.workdir, '/app');
    assert.equal(image.get('/app/dist'), serverOut);
    assert.equal(image.get('/app/web/dist'), webOut);
    assert.equal(image.get('/app/node_modules'), 'node_modules');
    assert.equal(image.get('/app/package.json'), 'package.json', 'read by the version module (dist/agent/../../package.json)');
    assert.equal(image.get('/app/bin'), 'bin');
    assert.equal(image.get('/app/drizzle'), 'drizzle');

    // dist/cli/main.js is compiled from src/cli/main.ts, and bin/outpost.js imports exactly that.
    assert.ok(existsSync(`${ROOT}${tsconfig.compilerOptions.rootDir}/cli/main.ts`));
    assert.match(read('bin/outpost.js'), /import\('\.\.\/dist\/cli\/main\.js'\)/);
    // migrations: dist/db/database.js resolves ../../drizzle, i.e. /app/drizzle
    assert.match(read('src/db/database.ts'), /new URL\('\.\.\/\.\.\/drizzle', import\.meta\.url\)/);
    assert.ok(existsSync(`${ROOT}drizzle/meta/_journal.json`));
    assert.ok(readdirSync(`${ROOT}drizzle`).some((f) => f.endsWith('.sql')));
    // dashboard: dist/gateway/web/web-assets.js resolves ../../../web/dist, i.e. /app/web/dist
    assert.match(read('src/gateway/web/web-assets.ts'), /new URL\('\.\.\/\.\.\/\.\.\/web\/dist', import\.meta\.url\)/);
    // the compiled build is forced: no sources in the image to compare it with
    assert.ok(runtime.instructions.some((i) => i.keyword === 'ENV' && /OUTPOST_RUNTIME=dist/.test(i.args)));
  });

  test('runs as a numeric non-root user created in the runtime stage', () => {
    assert.ok(runtime.user, 'USER is set');
    const [uid, gid] = runtime.user.split(':');
    assert.match(uid!, /^\d+$/, 'numeric uid (runAsNonRoot can verify it)');
    assert.notEqual(Number(uid), 0);
    assert.match(gid ?? '', /^\d+$/, 'numeric gid');
    assert.ok(
      runs(runtime).some((r) => r.includes(`useradd`) && r.includes(`--uid ${uid}`)),
      'the user exists in /etc/passwd',
    );
    assert.ok(!runtime.copies.some((c) => c.flags.has('chown')), 'application files stay root-owned (not writable by the process)');
    assert.match(read('deploy/gateway/base/deployment.yaml'), new RegExp(`runAsUser: ${uid}\\b`), 'the manifests run as the same uid');
    assert.match(read('deploy/agent/base/deployment.yaml'), new RegExp(`runAsUser: ${uid}\\b`));
  });

  test('entrypoint is outpost, health check and labels are present', () => {
    const entrypoint = runtime.instructions.find((i) => i.keyword === 'ENTRYPOINT');
    assert.ok(entrypoint);
    assert.deepEqual(execForm(entrypoint.args), ['node', '/app/bin/outpost.js']);
    const health = runtime.instructions.find((i) => i.keyword === 'HEALTHCHECK');
    assert.ok(health, 'HEALTHCHECK');
    const cmd = /CMD\s+(\[.*\])$/.exec(health.args);
    assert.ok(cmd, 'HEALTHCHECK CMD in exec form');
    const [node, script] = execForm(cmd[1]!);
    assert.equal(node, 'node');
    assert.ok(
      runtime.copies.some(
        (c) => c.from === undefined && c.sources.some((s) => landing(runtime, s, c.dest, c.sources.length > 1) === script),
      ),
      `${script} is copied into the image`,
    );
    const l = labels(runtime);
    for (const key of ['title', 'description', 'licenses', 'version', 'revision'])
      assert.ok(l.has(`org.opencontainers.image.${key}`), `OCI label ${key}`);
    assert.equal(l.get('org.opencontainers.image.licenses'), pkg.license);
    const versionArg = runtime.instructions.find((i) => i.keyword === 'ARG' && i.args.startsWith('VERSION='));
    assert.equal(versionArg?.args, `VERSION=${pkg.version}`, 'the default version label follows package.json');
    const exposed = runtime.instructions.find((i) => i.keyword === 'EXPOSE')?.args.split(/\s+/);
    assert.deepEqual(exposed, ['7002', '9091', '8082', '8008']);
  });
});

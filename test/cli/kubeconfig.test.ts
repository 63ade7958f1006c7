/**
 * `outpost kubeconfig`: a fresh file, a merge that leaves everything else as it was (comments included), replacing
 * an earlier outpost-ACCOUNT, the exec entry, the default path (KUBECONFIG, ~/.kube/config), mode 0600, and every
 * bad input refused with exit 2 and the file untouched.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { createScratch, EXISTING_KUBECONFIG, fakeJwt, runKubeCli } from './kubeconfig-helpers.js';

const BIN = fileURLToPath(new URL('../../bin/outpost.js', import.meta.url));
const scratch = createScratch();
after(() => scratch.cleanup());

const read = (path: string) => parse(readFileSync(path, 'utf8'));
const named = (list: any[], name: string): any[] => list.filter((e) => e.name === name);
const mode = (path: string) => statSync(path).mode & 0o777;

describe('outpost kubeconfig', () => {
  test('a fresh file: cluster, user and context outpost-ACCOUNT with the token from OUTPOST_TOKEN, mode 0600', async () => {
    const path = join(scratch.dir, 'fresh', 'config');
    const r = await runKubeCli(['kubeconfig', '--account', 'prod-eu', '--gateway', 'https://gw.example.com/', '--kubeconfig', path], {
      env: { OUTPOST_TOKEN: ' s3cret-token\n' },
    });
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, `context "outpost-prod-eu" written to ${path} (server https://gw.example.com/k8s/prod-eu)\n`);
    assert.deepEqual(read(path), {
      apiVersion: 'v1',
      kind: 'Config',
      preferences: {},
      clusters: [{ name: 'outpost-prod-eu', cluster: { server: 'https://gw.example.com/k8s/prod-eu' } }],
      users: [{ name: 'outpost-prod-eu', user: { token: 's3cret-token' } }],
      contexts: [{ name: 'outpost-prod-eu', context: { cluster: 'outpost-prod-eu', user: 'outpost-prod-eu' } }],
    });
    assert.equal(mode(path), 0o600);
    assert.deepEqual(readdirSync(join(scratch.dir, 'fresh')), ['config'], 'no temp file left behind');
  });

  test('no token at all (a gateway that needs none, such as the demo): a context without credentials, and a note', async () => {
    const path = join(scratch.dir, 'no-token.yaml');
    const r = await runKubeCli(['kubeconfig', '--account', 'sandbox', '--gateway', 'http://127.0.0.1:7002', '--kubeconfig', path], {
      env: {},
    });
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /^note: no token \(OUTPOST_TOKEN or --token-file FILE\): the context sends no credentials/);
    assert.doesNotMatch(r.err, /warning: kubectl sends no credentials over plain http/, 'nothing to warn about: there are none');
    const config = read(path);
    assert.deepEqual(config.users, [{ name: 'outpost-sandbox', user: {} }]);
    assert.deepEqual(config.clusters, [{ name: 'outpost-sandbox', cluster: { server: 'http://127.0.0.1:7002/k8s/sandbox' } }]);
  });

  test('--token-file (trimmed), --namespace, --context, --set-current, --ca-file; a gateway path prefix is kept', async () => {
    const path = join(scratch.dir, 'flags.yaml');
    const token = scratch.file('token', 'file-token\n');
    const ca = scratch.file('ca.pem', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const r = await runKubeCli(
      [
        'kubeconfig',
        '--account',
        'team.a_1',
        '--gateway',
        'https://gw.example.com/outpost',
        '--kubeconfig',
        path,
        '--token-file',
        token,
        '-n',
        'web',
        '--context',
        'team-a',
        '--set-current',
        '--ca-file',
        ca,
      ],
      { env: { OUTPOST_TOKEN: 'ignored-when-a-file-is-given' } },
    );
    assert.equal(r.code, 0, r.err);
    const config = read(path);
    assert.deepEqual(config.clusters, [
      { name: 'outpost-team.a_1', cluster: { server: 'https://gw.example.com/outpost/k8s/team.a_1', 'certificate-authority': ca } },
    ]);
    assert.deepEqual(config.users, [{ name: 'outpost-team.a_1', user: { token: 'file-token' } }]);
    assert.deepEqual(config.contexts, [
      { name: 'team-a', context: { cluster: 'outpost-team.a_1', user: 'outpost-team.a_1', namespace: 'web' } },
    ]);
    assert.equal(config['current-context'], 'team-a');
    assert.match(r.out, /current-context is now "team-a"/);
  });

  test('merging keeps every other entry, field, comment and the current context; only outpost-ACCOUNT is added', async () => {
    const path = scratch.file('merge.yaml', EXISTING_KUBECONFIG);
    const r = await runKubeCli(['kubeconfig', '--account', 'prod', '--gateway', 'http://127.0.0.1:7002', '--kubeconfig', path], {
      env: { OUTPOST_TOKEN: 'tok' },
    });
    assert.equal(r.code, 0, r.err);
    const text = readFileSync(path, 'utf8');
    const before = parse(EXISTING_KUBECONFIG);
    const config = parse(text);
    // everything that was there is still there, in order, and exactly one entry was appended to each list
    for (const section of ['clusters', 'users', 'contexts']) {
      assert.deepEqual(config[section].slice(0, -1), before[section], section);
      assert.equal(config[section].at(-1).name, 'outpost-prod');
    }
    for (const key of ['apiVersion', 'kind', 'preferences', 'current-context']) assert.deepEqual(config[key], before[key], key);
    // comments survive, and untouched lines keep their text: the old file's lines appear in order in the new one
    assert.match(text, /^# managed by hand: keep this comment\n/);
    assert.match(text, /name: prod # the production cluster\n/);
    const lines = text.split('\n');
    let at = 0;
    for (const line of EXISTING_KUBECONFIG.split('\n')) {
      const found = lines.indexOf(line, at);
      assert.ok(found >= 0, `line kept: ${JSON.stringify(line)}`);
      at = found + 1;
    }
    assert.equal(mode(path), 0o600);
  });

  test('an existing outpost-ACCOUNT is replaced in place (its comment kept), once, and nothing else changes', async () => {
    const path = scratch.file('replace.yaml', EXISTING_KUBECONFIG);
    const args = ['kubeconfig', '--account', 'prod', '--kubeconfig', path, '--gateway'];
    assert.equal((await runKubeCli([...args, 'https://old.example.com'], { env: { OUTPOST_TOKEN: 'old' } })).code, 0);
    // a hand-written comment on the entry, and another entry after it
    const edited = readFileSync(path, 'utf8').replace('- name: outpost-prod\n  user:', '# renewed monthly\n- name: outpost-prod\n  user:');
    scratch.file('replace.yaml', `${edited}`);
    const r = await runKubeCli([...args, 'https://new.example.com', '--exec'], { env: {} });
    assert.equal(r.code, 0, r.err);
    const text = readFileSync(path, 'utf8');
    const config = parse(text);
    const before = parse(EXISTING_KUBECONFIG);
    for (const section of ['clusters', 'users', 'contexts']) {
      assert.equal(named(config[section], 'outpost-prod').length, 1, `one outpost-prod in ${section}`);
      assert.deepEqual(config[section].slice(0, -1), before[section]);
    }
    assert.equal(named(config.clusters, 'outpost-prod')[0].cluster.server, 'https://new.example.com/k8s/prod');
    assert.equal(named(config.users, 'outpost-prod')[0].user.token, undefined, 'the old token is gone');
    assert.ok(named(config.users, 'outpost-prod')[0].user.exec);
    assert.match(text, /# renewed monthly\n- name: outpost-prod\n/);
    assert.ok(!text.includes('old'), 'nothing of the old entry is left');
  });

  test('--exec: an exec plugin entry running this CLI\'s "credential" with the token file path, never the token', async () => {
    const path = join(scratch.dir, 'exec.yaml');
    const token = scratch.file('exec-token', 'plugin-token\n');
    const r = await runKubeCli(['kubeconfig', '--account', 'prod', '--kubeconfig', path, '--exec', '--token-file', token], {
      env: { OUTPOST_TOKEN: 'env-token' },
    });
    assert.equal(r.code, 0, r.err);
    const text = readFileSync(path, 'utf8');
    assert.ok(!text.includes('plugin-token') && !text.includes('env-token'), 'no token in the file');
    assert.deepEqual(read(path).users, [
      {
        name: 'outpost-prod',
        user: {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: BIN,
            args: ['credential', '--token-file', token],
            interactiveMode: 'Never',
            provideClusterInfo: false,
            installHint: read(path).users[0].user.exec.installHint,
          },
        },
      },
    ]);
    assert.ok(existsSync(BIN));
    // without --token-file the plugin reads OUTPOST_TOKEN from kubectl's environment: a note says so when it is unset
    const bare = await runKubeCli(['kubeconfig', '--account', 'prod', '--kubeconfig', path, '--exec'], { env: {} });
    assert.equal(bare.code, 0, bare.err);
    assert.deepEqual(read(path).users[0].user.exec.args, ['credential']);
    assert.match(bare.err, /OUTPOST_TOKEN/);
  });

  test('the default file is the first KUBECONFIG path, else $HOME/.kube/config (created with its directory)', async () => {
    const first = join(scratch.dir, 'kc-first');
    const second = scratch.file('kc-second', EXISTING_KUBECONFIG);
    const env = { OUTPOST_TOKEN: 't', KUBECONFIG: `${first}:${second}` };
    assert.equal((await runKubeCli(['kubeconfig', '--account', 'a'], { env })).code, 0);
    assert.ok(existsSync(first));
    assert.equal(readFileSync(second, 'utf8'), EXISTING_KUBECONFIG, 'the other KUBECONFIG files are not touched');
    const home = join(scratch.dir, 'home');
    const r = await runKubeCli(['kubeconfig', '--account', 'a'], { env: { OUTPOST_TOKEN: 't', HOME: home } });
    assert.equal(r.code, 0, r.err);
    assert.equal(read(join(home, '.kube', 'config')).clusters[0].cluster.server, 'http://127.0.0.1:7002/k8s/a');
    // OUTPOST_GATEWAY and OUTPOST_ACCOUNT are the defaults of --gateway and --account, as for the other commands
    const viaEnv = await runKubeCli(['kubeconfig'], {
      env: { OUTPOST_TOKEN: 't', HOME: home, OUTPOST_GATEWAY: 'https://env.example.com', OUTPOST_ACCOUNT: 'b' },
    });
    assert.equal(viaEnv.code, 0, viaEnv.err);
    assert.equal(named(read(join(home, '.kube', 'config')).clusters, 'outpost-b')[0].cluster.server, 'https://env.example.com/k8s/b');
  });

  test('a file with indented sequences keeps that style; a stored JWT gets a note about its expiry', async () => {
    const original =
      'apiVersion: v1\nkind: Config\nclusters:\n  - name: other\n    cluster:\n      server: https://other:6443\nusers: []\ncontexts: []\n';
    const path = scratch.file('indented.yaml', original);
    const jwt = fakeJwt({ exp: Math.floor(Date.now() / 1000) + 3600 });
    const r = await runKubeCli(['kubeconfig', '--account', 'a', '--gateway', 'https://gw', '--kubeconfig', path], {
      env: { OUTPOST_TOKEN: jwt },
    });
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /the token is a JWT that expires at \d{4}-\d\d-\d\dT/);
    const text = readFileSync(path, 'utf8');
    assert.ok(text.startsWith(original.slice(0, original.indexOf('users:'))), text);
    assert.match(text, /\nusers:\n {2}- name: outpost-a\n {4}user:\n {6}token: /);
  });

  test('a kubeconfig behind a symbolic link is written through the link', async () => {
    const target = scratch.file('real-config', EXISTING_KUBECONFIG);
    const link = join(scratch.dir, 'linked-config');
    symlinkSync(target, link);
    const r = await runKubeCli(['kubeconfig', '--account', 'a', '--kubeconfig', link], { env: { OUTPOST_TOKEN: 't' } });
    assert.equal(r.code, 0, r.err);
    assert.ok(statSync(link).isFile() && read(target).clusters.some((c: { name: string }) => c.name === 'outpost-a'));
  });
});

describe('outpost kubeconfig refuses bad input: exit 2, a message, the file unchanged', () => {
  const token = scratch.file('good-token', 'tok\n');
  const cases: [string, string[], NodeJS.ProcessEnv, RegExp, string?][] = [
    ['an invalid account name', ['--account', 'Prod_EU!'], {}, /invalid account name "Prod_EU!"/],
    ['an account name with a slash', ['--account', 'a/b'], {}, /invalid account name/],
    ['a gateway URL that is not http(s)', ['--account', 'a', '--gateway', 'ftp://gw'], {}, /invalid --gateway URL "ftp:\/\/gw"/],
    ['a gateway URL that is not a URL', ['--account', 'a', '--gateway', 'gw:7002x'], {}, /invalid --gateway URL/],
    ['a gateway URL with a query', ['--account', 'a', '--gateway', 'https://gw/?x=1'], {}, /no user, query or fragment/],
    ['an empty OUTPOST_TOKEN', ['--account', 'a'], { OUTPOST_TOKEN: '  \n' }, /OUTPOST_TOKEN is empty/],
    ['an empty token file', ['--account', 'a', '--token-file', 'EMPTY'], {}, /the token file .*empty is empty/],
    ['an empty token file with --exec', ['--account', 'a', '--exec', '--token-file', 'EMPTY'], {}, /empty is empty/],
    [
      'a missing token file',
      ['--account', 'a', '--token-file', '/nonexistent/token'],
      {},
      /cannot read the token file \/nonexistent\/token \(ENOENT\)/,
    ],
    ['a token with spaces', ['--account', 'a'], { OUTPOST_TOKEN: 'two words' }, /does not hold a single token/],
    ['a bad namespace', ['--account', 'a', '-n', 'Web_1'], {}, /invalid --namespace "Web_1"/],
    ['a CA file with http', ['--account', 'a', '--ca-file', 'GOODTOKEN'], {}, /need an https:\/\/ gateway/],
    ['a CA file that is no PEM', ['--account', 'a', '--gateway', 'https://gw', '--ca-file', 'GOODTOKEN'], {}, /holds no PEM certificate/],
    [
      'a CA file and --insecure-skip-tls-verify',
      ['--account', 'a', '--gateway', 'https://gw', '--ca-file', 'GOODTOKEN', '--insecure-skip-tls-verify'],
      {},
      /exclude each other/,
    ],
    ['a missing --account', [], {}, /required option '--account <name>' not specified/],
    ['an unknown flag', ['--account', 'a', '--tokne-file', 'x'], {}, /unknown option '--tokne-file'/],
    [
      'an existing file that is not YAML',
      ['--account', 'a'],
      {},
      /kubeconfig .*bad-yaml is not valid: YAML error at line 2/,
      'clusters: [\n  - name: x\n  users: {',
    ],
    ['an existing file that is a list', ['--account', 'a'], {}, /is not valid: the top level is not a mapping/, '- a\n- b\n'],
    [
      'an existing file of another kind',
      ['--account', 'a'],
      {},
      /is not valid: kind is "Pod", expected Config/,
      'apiVersion: v1\nkind: Pod\n',
    ],
    ['clusters that are not a list', ['--account', 'a'], {}, /is not valid: clusters is not a list/, 'apiVersion: v1\nclusters: {a: 1}\n'],
    ['an entry without a name', ['--account', 'a'], {}, /is not valid: users\[1\] has no string name/, 'users:\n- name: x\n- user: {}\n'],
    ['duplicate keys', ['--account', 'a'], {}, /is not valid: YAML error/, 'apiVersion: v1\napiVersion: v1\n'],
  ];
  for (const [what, args, env, message, existing] of cases) {
    test(what, async () => {
      const original = existing ?? EXISTING_KUBECONFIG;
      const path = scratch.file(existing === undefined ? 'unchanged.yaml' : 'bad-yaml', original);
      const empty = scratch.file('empty', '\n \n');
      const resolved = args.map((a) => (a === 'EMPTY' ? empty : a === 'GOODTOKEN' ? token : a));
      const r = await runKubeCli(['kubeconfig', '--kubeconfig', path, ...resolved], { env: { OUTPOST_TOKEN: 'tok', ...env } });
      assert.equal(r.code, 2, `exit 2 (stderr: ${r.err})`);
      assert.match(r.err, message);
      assert.equal(r.out, '');
      assert.equal(readFileSync(path, 'utf8'), original, 'file unchanged');
    });
  }

  test('an unreadable kubeconfig (a directory) is named and left alone', async () => {
    const r = await runKubeCli(['kubeconfig', '--account', 'a', '--kubeconfig', scratch.dir], { env: { OUTPOST_TOKEN: 't' } });
    assert.equal(r.code, 2);
    assert.match(r.err, /cannot read the kubeconfig .* \(EISDIR\)/);
  });
});

/**
 * `outpost get` prints what the real kubectl prints for the same objects of the same cluster, byte for byte: the TLS
 * sandbox read by each installed kubectl directly and by `outpost get` through the gateway and its agent (live, and
 * `--cached` where the cache serves the kind). `-o yaml` (one object, a List, an empty List), `-o json` (one object, a
 * List), and the table of `get -A` with objects in several namespaces created in non-sorted order.
 *
 * The only thing removed before comparing is the AGE column of the tables: each program computes it at its own
 * instant. The objects were chosen so that no controller changes them between the two reads.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { waitForCacheToMatch } from '../../testkit/cache-compare.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { KUBECTLS } from '../e2e/kubectl-helpers.js';
import { createKubectl, type Kubectl } from '../../testkit/kubectl-runner.js';
import { runCli } from './operations-helpers.js';

/** Strings go-yaml quotes, folds, escapes or writes as blocks, and keys in go-yaml's order (not byte order). */
const TRICKY_DATA: Record<string, string> = {
  plain: 'hello world',
  ...{ num: '1', float: '1.5', exp: '1e3', hex: '0x1F', oct: '0o17', o8: '08', und: '1_000', big: '99999999999999999999' },
  ...{ yes: 'yes', no: 'NO', on: 'On', off: 'off', y: 'y', n: 'n', bool: 'True', tilde: '~', null: 'null', empty: '' },
  ...{ date: '2024-01-01', stamp: '2024-01-01T00:00:00Z', spaced: '2024-1-2 3:04:05', feb30: '2024-02-30', base60: '190:20:30' },
  ...{ star: '*', amp: '&a', bang: '!x', dash: '- x', dashx: '-x', q: '? x', colon: ': x', kv: 'a: b', hash: 'a #b' },
  ...{ hash2: 'a#b', hash3: '#c', flow: '[x]', brace: '{x}', comma: 'x, y', pct: '%x', at: '@x', tick: '`x', single: "'q'" },
  ...{ double: '"dq"', pipe: '|', gt: '>', lone: '-', doc: '---', dots: '...x', glued: 'a:b', qx: '?x', cx: ':x' },
  ...{ lead: ' lead', trail: 'trail ', twice: 'a  b' },
  ...{ m1: 'l1\nl2\n', m2: 'l1\nl2', m3: 'l1\n\nl2\n\n', m4: '\nlead', m5: '  indented\nx\n', m6: 'a \nb', m7: 'tab\there' },
  ...{ m8: 'tab\n\tline', m9: '\n', m10: 'crlf\r\nx' },
  ...{ u1: 'héllo', u2: '日本', u3: 'emoji 😀', u4: 'nbsp\u00a0x', u5: 'bom\ufeff', u6: 'ctrl\u0001', u7: '\u2028sep' },
  ...{ u8: 'a<b&c>d', nel1: 'nel\u0085x', nel2: 'a \u0085 b', nel3: 'a\u0085\u0085b', nel4: '\u0085lead', nel5: 'x\u0085\ny' },
  long1:
    'this is a rather long value with many words that should exceed the eighty column width for sure and then some more words to wrap twice',
  long2: 'a: this single-quoted value is rather long with many words that should exceed the eighty column width and wrap',
  long3: 'tab\tthis double-quoted value is rather long with many words that should exceed the eighty column  width  and  wrap',
  long4: 'averyveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryverylongword then more',
  long5: 'a literal whose very long first line goes past the eighty column width without being folded at all\nsecond\n',
  ...{ '10': 'k', '9': 'k', a2: 'k', a10: 'k', a02: 'k', A: 'k', B: 'k', b: 'k', _x: 'k', '-x': 'k', 'x.y': 'k' },
  ...{ 'a-1': 'k', 'a.1': 'k', a_1: 'k', true: 'k', '1.5': 'k' },
};

/** Numbers (integers, Go's %g floats), null, empty and nested collections, folded scalars in sequences. */
const WIDGET_SPEC = {
  ...{ f1: 1.5, f2: 1e-7, f3: 1234567.5, f4: 1e21, f5: -0.0001, f6: 100000000, f7: 0.1, f8: 123456.789, f9: -2.5e-5 },
  ...{ f10: 3.0, f11: 1e300, b: true, n: null, e1: [], e2: {}, nest: [[1, 2], [], [{}], { a: [{ b: [1] }] }] },
  s: ['x', '- y', '', ' ', 'yes'],
  long: [
    { key: 'value that is quite long and keeps going past the eighty column limit in a sequence item' },
    'plain sequence scalar that is long enough to be folded at the eighty column width limit ok',
  ],
  deep: { a: { b: { c: { d: { e: 'a long value deep in nesting that will surely cross column eighty and fold over' } } } } },
  ml: ['line1\nline2\n', { k: ' lead\nx' }],
};

const WIDGET_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;

/** Namespaces created in this order, each with ConfigMaps `z`, `a`, `m`: `ord-a` sorts before `ord` in the server. */
const ORDER_NAMESPACES = ['ord-b', 'ord', 'orda', 'ord-a', 'ord-a-1'];

describe('outpost get prints what kubectl prints', { skip: KUBECTLS.length === 0 ? 'no kubectl installed' : false }, () => {
  let stack: Stack;
  const kubectls: { label: string; kubectl: Kubectl }[] = [];
  const cli = async (...args: string[]) => {
    const r = await runCli([...args, '--gateway', stack.gateway.httpUrl, '--account', 'sandbox']);
    assert.equal(r.code, 0, `outpost ${args.join(' ')}: ${r.err}`);
    return r.out;
  };
  const newest = () => kubectls.at(-1)!.kubectl;

  before(async () => {
    // kubectl sends its bearer token over TLS only.
    stack = await startStack({ agents: [{}], sandbox: { tls: true } });
    for (const k of KUBECTLS) kubectls.push({ label: k.label, kubectl: await createKubectl(k.bin, stack.sandbox) });
    const file = (name: string, value: unknown) => {
      const path = join(stack.dir, name);
      writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
      return path;
    };
    const store = stack.sandbox.store;
    store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'same' } });
    // Created by kubectl apply: its last-applied annotation is a long JSON line with every value again.
    const tricky = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tricky', namespace: 'same', labels: { app: 'x' } } };
    await newest().ok(['apply', '-f', file('tricky.json', { ...tricky, data: TRICKY_DATA })]);
    // Server-side apply: the object carries managedFields, which kubectl leaves out.
    const ssa = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa', namespace: 'same' }, data: { k: 'v' } };
    await newest().ok(['apply', '--server-side', '-f', file('ssa.json', ssa)]);
    assert.ok(store.get('v1', 'ConfigMap', 'same', 'ssa')?.metadata.managedFields, 'the object has managed fields');
    await newest().ok(['apply', '-f', file('crd.yaml', WIDGET_CRD)]);
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'same' }, spec: WIDGET_SPEC };
    // The API server serves a new CRD's kind a moment after the CRD is stored.
    await eventually('the Widget kind is served', () => newest().ok(['apply', '-f', file('widget.json', widget)]));
    for (const ns of ORDER_NAMESPACES) {
      store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      for (const name of ['z', 'a', 'm'])
        store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { k: ns } });
    }
    await waitForCacheToMatch(stack.gateway.database, stack.sandbox, 'sandbox', { timeoutMs: 25_000 });
  });
  after(async () => {
    for (const k of kubectls) k.kubectl.cleanup();
    await stack?.close();
  });

  /** Asserts that every kubectl prints `args` exactly as `outpost get …` does (after `normalize`, for tables). */
  const same = async (args: string[], outpostArgs: string[] = args, normalize = (s: string) => s) => {
    const ours = normalize(await cli(...outpostArgs));
    for (const { label, kubectl } of kubectls) {
      assert.equal(ours, normalize(await kubectl.ok(args)), `${label} ${args.join(' ')} vs outpost ${outpostArgs.join(' ')}`);
    }
    return ours;
  };

  test('-o yaml of one object: sorted keys, quoted timestamps and numbers, go-yaml scalars, no managedFields', async () => {
    const yaml = await same(['get', 'configmap', 'tricky', '-n', 'same', '-o', 'yaml']);
    assert.match(yaml, /^apiVersion: v1\ndata:\n/);
    assert.match(yaml, /\n {2}creationTimestamp: "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"\n/);
    assert.match(yaml, /\n {2}uid: \S+\n$/, 'uid last in metadata, metadata last');
    await same(['get', 'configmap', 'ssa', '-n', 'same', '-o', 'yaml']);
    await same(['get', 'Widget', 'w', '-n', 'same', '-o', 'yaml']);
    await same(['get', 'CustomResourceDefinition', 'widgets.example.com', '-o', 'yaml']);
    await same(
      ['get', 'configmap', 'tricky', '-n', 'same', '-o', 'yaml'],
      ['get', 'configmap', 'tricky', '-n', 'same', '-o', 'yaml', '--cached'],
    );
  });

  test('-o yaml of a listing: kind List, items, metadata.resourceVersion ""; an empty one too', async () => {
    const list = await same(['get', 'configmaps', '-n', 'same', '-o', 'yaml']);
    assert.match(list, /^apiVersion: v1\nitems:\n- apiVersion: v1\n[\s\S]*\nkind: List\nmetadata:\n {2}resourceVersion: ""\n$/);
    await same(['get', 'Widget', '-A', '-o', 'yaml']);
    await same(['get', 'configmaps', '-A', '-o', 'yaml']);
    assert.equal(
      await same(['get', 'configmaps', '-n', 'nothing-here', '-o', 'yaml']),
      'apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: ""\n',
    );
  });

  test('-o json of one object and of a listing: keys sorted by bytes, HTML characters escaped', async () => {
    const json = await same(['get', 'configmap', 'tricky', '-n', 'same', '-o', 'json']);
    assert.match(json, /^\{\n {4}"apiVersion": "v1",\n {4}"data": \{\n/);
    assert.match(json, /"u8": "a\\u003cb\\u0026c\\u003ed"/);
    await same(['get', 'configmap', 'ssa', '-n', 'same', '-o', 'json']);
    await same(['get', 'Widget', 'w', '-n', 'same', '-o', 'json']);
    await same(['get', 'configmaps', '-n', 'same', '-o', 'json']);
    await same(['get', 'configmaps', '-n', 'nothing-here', '-o', 'json']);
  });

  test('get -A lists in the server\'s order (namespace/name by bytes: "ord-a" before "ord"), live and cached', async () => {
    const withoutAge = (table: string) => table.replace(/ +\S+$/gm, '');
    const table = await same(['get', 'configmaps', '-A'], ['get', 'configmaps', '-A'], withoutAge);
    const ours = table
      .split('\n')
      .filter((l) => l.startsWith('ord'))
      .map((l) => l.split(/ +/).slice(0, 2).join('/'));
    assert.deepEqual(
      ours,
      ['ord-a-1', 'ord-a', 'ord-b', 'ord', 'orda'].flatMap((ns) => ['a', 'm', 'z'].map((n) => `${ns}/${n}`)),
      'the API server keys objects by namespace/name and lists them in byte order of that key',
    );
    await same(['get', 'configmaps', '-A'], ['get', 'configmaps', '-A', '--cached'], withoutAge);
    await same(['get', 'namespaces'], ['get', 'namespaces', '--cached'], withoutAge);
  });
});

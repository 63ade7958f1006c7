import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LabelSelectorError, labelSelectorText, matchesLabels, parseLabelSelectors } from '../../src/gateway/spinnaker/label-selectors.js';

const sel = (...selectors: unknown[]) => ({ selectors });

describe("Clouddriver's labelSelectors", () => {
  test('no selector at all: absent, null, or an empty selectors list', () => {
    for (const raw of [undefined, null, {}, { selectors: null }, { selectors: [] }])
      assert.equal(parseLabelSelectors(raw), undefined, JSON.stringify(raw));
  });

  test('every kind, written as a Kubernetes label selector; ANY adds no requirement', () => {
    const reqs = parseLabelSelectors(
      sel(
        { kind: 'ANY' },
        { kind: 'EQUALS', key: 'app', values: ['web'] },
        { kind: 'NOT_EQUALS', key: 'tier', values: ['db'] },
        { kind: 'CONTAINS', key: 'env', values: ['prod', 'staging'] },
        { kind: 'NOT_CONTAINS', key: 'zone', values: ['a'] },
        { kind: 'EXISTS', key: 'owner' },
        { kind: 'NOT_EXISTS', key: 'legacy', values: null },
      ),
    )!;
    assert.equal(labelSelectorText(reqs), 'app=web,tier!=db,env in (prod,staging),zone notin (a),owner,!legacy');
    assert.deepEqual(parseLabelSelectors(sel({ kind: 'ANY' })), []);
  });

  test('matching follows Kubernetes: != and notin hold for a missing key, in and exists need it', () => {
    const cases: [unknown, Record<string, string> | undefined, boolean][] = [
      [{ kind: 'EQUALS', key: 'app', values: ['web'] }, { app: 'web' }, true],
      [{ kind: 'EQUALS', key: 'app', values: ['web'] }, { app: 'api' }, false],
      [{ kind: 'EQUALS', key: 'app', values: ['web'] }, undefined, false],
      [{ kind: 'NOT_EQUALS', key: 'app', values: ['web'] }, {}, true],
      [{ kind: 'NOT_EQUALS', key: 'app', values: ['web'] }, { app: 'web' }, false],
      [{ kind: 'CONTAINS', key: 'env', values: ['a', 'b'] }, { env: 'b' }, true],
      [{ kind: 'CONTAINS', key: 'env', values: ['a', 'b'] }, {}, false],
      [{ kind: 'NOT_CONTAINS', key: 'env', values: ['a'] }, {}, true],
      [{ kind: 'NOT_CONTAINS', key: 'env', values: ['a'] }, { env: 'a' }, false],
      [{ kind: 'EXISTS', key: 'owner' }, { owner: '' }, true],
      [{ kind: 'EXISTS', key: 'owner' }, {}, false],
      [{ kind: 'NOT_EXISTS', key: 'owner' }, {}, true],
      [{ kind: 'NOT_EXISTS', key: 'owner' }, { owner: 'x' }, false],
      [{ kind: 'ANY' }, undefined, true],
    ];
    for (const [selector, labels, expected] of cases) {
      assert.equal(
        matchesLabels(parseLabelSelectors(sel(selector))!, labels),
        expected,
        `${JSON.stringify(selector)} on ${JSON.stringify(labels)}`,
      );
    }
    const both = parseLabelSelectors(sel({ kind: 'EQUALS', key: 'app', values: ['web'] }, { kind: 'EXISTS', key: 'canary' }))!;
    assert.equal(matchesLabels(both, { app: 'web' }), false, 'every requirement must hold');
    assert.equal(matchesLabels(both, { app: 'web', canary: 'true' }), true);
  });

  test('malformed selectors are refused with a message naming the field', () => {
    const bad: [unknown, RegExp][] = [
      ['app=web', /must be an object/],
      [{ selectors: 'app=web' }, /selectors must be a list/],
      [sel({ kind: 'LIKE', key: 'a', values: ['b'] }), /selectors\[0\]\.kind must be one of ANY, EQUALS/],
      [sel({ key: 'a', values: ['b'] }), /selectors\[0\]\.kind/],
      [sel({ kind: 'EQUALS', values: ['b'] }), /selectors\[0\]\.key is required/],
      [sel({ kind: 'EQUALS', key: 'a', values: ['b', 'c'] }), /needs exactly one value/],
      [sel({ kind: 'CONTAINS', key: 'a', values: [] }), /needs at least one value/],
      [sel({ kind: 'EQUALS', key: 'a', values: [1] }), /values must be a list of strings/],
      [sel(null), /selectors\[0\]\.kind/],
    ];
    for (const [raw, message] of bad)
      assert.throws(
        () => parseLabelSelectors(raw),
        (err) => err instanceof LabelSelectorError && message.test(err.message),
        JSON.stringify(raw),
      );
  });
});

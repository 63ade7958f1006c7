import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { annotatedLogLines, podControls } from '../../src/sandbox/pod-controls.js';
import type { KubeObject } from '../../src/sandbox/types.js';

const pod = (annotations: Record<string, string> = {}, image = 'nginx:1.27'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', annotations },
  spec: {
    containers: [
      { name: 'app', image },
      { name: 'side', image: 'busybox' },
    ],
  },
});

describe('podControls', () => {
  test('no controls: ready at once, runs forever', () => {
    assert.deepEqual(podControls(pod()), { readyAfterMs: 0, neverReady: false, exitCode: undefined, runMs: undefined });
  });

  test('annotations', () => {
    assert.equal(podControls(pod({ 'sandbox.outpost.dev/ready-after-ms': '2000' })).readyAfterMs, 2000);
    assert.equal(podControls(pod({ 'sandbox.outpost.dev/never-ready': 'true' })).neverReady, true);
    assert.equal(podControls(pod({ 'sandbox.outpost.dev/fail': 'true' })).exitCode, 1);
    assert.equal(podControls(pod({ 'sandbox.outpost.dev/fail': '3' })).exitCode, 3);
    assert.equal(podControls(pod({ 'sandbox.outpost.dev/fail': 'false' })).exitCode, undefined);
    assert.equal(podControls(pod({ 'sandbox.outpost.dev/exit-code': '0', 'sandbox.outpost.dev/run-ms': '500' })).exitCode, 0);
    assert.equal(podControls(pod({ 'sandbox.outpost.dev/run-ms': '500' })).runMs, 500);
    assert.equal(podControls(pod({ 'sandbox.outpost.dev/ready-after-ms': 'soon' })).readyAfterMs, 0, 'unparseable values are ignored');
  });

  test('sandbox/ images, overridden by annotations', () => {
    assert.equal(podControls(pod({}, 'sandbox/never-ready')).neverReady, true);
    assert.equal(podControls(pod({}, 'registry.local:5000/sandbox/fail:7')).exitCode, 7);
    assert.equal(podControls(pod({}, 'sandbox/fail')).exitCode, 1);
    assert.equal(podControls(pod({}, 'sandbox/ready-after:250')).readyAfterMs, 250);
    assert.equal(podControls(pod({}, 'sandbox/run:40')).runMs, 40);
    assert.equal(podControls(pod({ 'sandbox.outpost.dev/ready-after-ms': '5' }, 'sandbox/ready-after:250')).readyAfterMs, 5);
    assert.equal(podControls(pod({}, 'mysandbox/fail')).exitCode, undefined);
  });
});

describe('annotatedLogLines', () => {
  test('per-container form wins, trailing newline ignored, none means synthesised', () => {
    const p = pod({
      'sandbox.outpost.dev/log': 'SPINNAKER_PROPERTY_FOO=bar\nSPINNAKER_CONFIG_JSON={"a":1}\n',
      'sandbox.outpost.dev/log.side': 'side line',
    });
    assert.deepEqual(annotatedLogLines(p, 'app'), ['SPINNAKER_PROPERTY_FOO=bar', 'SPINNAKER_CONFIG_JSON={"a":1}']);
    assert.deepEqual(annotatedLogLines(p, 'side'), ['side line']);
    assert.equal(annotatedLogLines(pod(), 'app'), undefined);
  });
});

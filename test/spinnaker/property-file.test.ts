/**
 * The Run Job property file and job state, as Clouddriver reads them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { jobState, jobStatusView } from '../../src/gateway/spinnaker/job-status.js';
import { PropertyFileError, parsePropertyFile } from '../../src/gateway/spinnaker/property-file.js';

describe('property file', () => {
  test('SPINNAKER_PROPERTY_ lines and SPINNAKER_CONFIG_JSON merge; keys are lower-cased; other lines are ignored', () => {
    const log = [
      'starting',
      'SPINNAKER_PROPERTY_FOO=bar',
      '  echo: SPINNAKER_PROPERTY_Build_ID= 42 \r',
      'SPINNAKER_CONFIG_JSON={"a":1,"nested":{"b":[2]}}',
      'Spinnaker_Property_x=y',
    ].join('\n');
    assert.deepEqual(parsePropertyFile(log), { foo: 'bar', '  echo: build_id': '42', a: 1, nested: { b: [2] } });
  });
  test('a value ends at the next "=" (as in Clouddriver)', () => {
    assert.deepEqual(parsePropertyFile('SPINNAKER_PROPERTY_URL=a=b'), { url: 'a' });
  });
  test('the JSON marker counts only at the start of a line', () => {
    assert.deepEqual(parsePropertyFile('log SPINNAKER_CONFIG_JSON={"a":1}'), {});
  });
  test('malformed JSON names its line', () => {
    assert.throws(
      () => parsePropertyFile('x\nSPINNAKER_CONFIG_JSON={"a": "b}'),
      (err) => err instanceof PropertyFileError && /line 2 is not valid JSON/.test(err.message),
    );
    assert.throws(() => parsePropertyFile('SPINNAKER_CONFIG_JSON=[1]'), /not a JSON object/);
  });
});

describe('job state', () => {
  const job = (spec: object, status?: object) => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'j', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec,
    status,
  });
  test('Running without status or while succeeded < completions; Failed with a Failed=True condition; Succeeded', () => {
    assert.equal(jobState(job({})), 'Running');
    assert.equal(jobState(job({ completions: 2 }, { succeeded: 1 })), 'Running');
    assert.equal(jobState(job({}, { failed: 1, conditions: [{ type: 'Failed', status: 'True' }] })), 'Failed');
    assert.equal(jobState(job({}, { succeeded: 1 })), 'Succeeded');
  });
  test('a failed job reports the condition and the failed container', () => {
    const pods = [
      {
        metadata: { name: 'j-b', creationTimestamp: '2026-01-01T00:00:02Z' },
        status: { phase: 'Failed', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 3, reason: 'Error' } } }] },
      },
      { metadata: { name: 'j-a', creationTimestamp: '2026-01-01T00:00:01Z' }, status: { phase: 'Failed' } },
    ];
    const view = jobStatusView(
      job(
        { backoffLimit: 0 },
        {
          failed: 1,
          conditions: [
            { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' },
          ],
        },
      ),
      pods,
      'acct',
    );
    assert.equal(view.jobState, 'Failed');
    assert.deepEqual(view.completionDetails, {
      exitCode: '3',
      signal: '',
      message: 'Job has reached the specified backoff limit',
      reason: 'BackoffLimitExceeded',
    });
    assert.equal(view.mostRecentPodName, 'j-b');
    assert.deepEqual(
      view.pods.map((p) => p.name),
      ['j-a', 'j-b'],
    );
    assert.match(view.failureDetails!, /Container: 'main' exited with code: 3/);
    assert.equal(view.createdTime, Date.parse('2026-01-01T00:00:00Z'));
    assert.equal(view.provider, 'kubernetes');
  });
});

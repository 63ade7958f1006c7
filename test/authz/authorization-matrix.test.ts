/**
 * The authorization matrix over the real network: every REST route and RPC method × (no credentials, wrong
 * credentials, another identity, the right one), from test/authz/authorization-table.ts, against one gateway with
 * tokens, a replica secret and roles on PGlite. Fails on any cell that differs, on a route or method missing from the
 * table (or named by it without existing), and when docs/authorization-matrix.md differs from the table's rendering.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { DescService } from '@bufbuild/protobuf';
import { listRestRoutes } from '../../testkit/rest-routes.js';
import { AUTHORIZATION_TABLE } from './authorization-table.js';
import { startMatrixGateway, type MatrixGateway } from './matrix-gateway.js';
import { describeFailure, runMatrix, summarize } from './matrix-runner.js';
import { MATRIX_DOC, renderMatrix } from './render-matrix.js';
import { generatedServices, reflectedServiceNames } from './served-services.js';
import { requestsMatchTargets, restCompleteness, rpcCompleteness } from './table-completeness.js';

describe('authorization matrix', { concurrency: false, timeout: 60_000 }, () => {
  let gw: MatrixGateway;
  let generated: Map<string, DescService>;
  before(async () => {
    generated = await generatedServices();
    gw = await startMatrixGateway(generated);
  });
  after(async () => {
    await gw?.close();
  });

  test('the table lists every REST route, and only real ones', () => {
    assert.deepEqual(restCompleteness(AUTHORIZATION_TABLE, listRestRoutes()), []);
  });

  test('the table lists every RPC method the gateway serves, and only real ones', async () => {
    const served = await reflectedServiceNames(gw.context.grpcUrl, gw.authorization('reader')!);
    assert.ok(served.includes('outpost.agent.v1.AgentService') && served.includes('grpc.health.v1.Health'), served.join(', '));
    assert.deepEqual(rpcCompleteness(AUTHORIZATION_TABLE, served, generated), []);
  });

  test("every row's request calls the route or method the row names", () => {
    assert.deepEqual(requestsMatchTargets(AUTHORIZATION_TABLE), []);
  });

  test('every cell gets the outcome the table expects', async () => {
    const run = await runMatrix(gw, AUTHORIZATION_TABLE);
    console.log(summarize(run));
    assert.equal(run.cells, AUTHORIZATION_TABLE.length * 4);
    assert.deepEqual(run.failures.map(describeFailure), []);
  });

  test(`${MATRIX_DOC} is the rendering of the table`, () => {
    const committed = readFileSync(new URL(`../../${MATRIX_DOC}`, import.meta.url), 'utf8');
    assert.ok(
      committed === renderMatrix(),
      `${MATRIX_DOC} is out of date: run node --import tsx test/authz/render-matrix.ts --write ${MATRIX_DOC}`,
    );
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authSetupProblem } from '../../src/gateway/index.js';
import { loadGatewayConfig } from '../../src/gateway/config/load.js';
import type { GatewayConfigInput } from '../../src/gateway/config/schema.js';

const config = (overrides: GatewayConfigInput) => loadGatewayConfig({ env: {}, overrides: { database: 'memory://', ...overrides } });

test('a secure gateway that can admit nobody is reported at start-up', () => {
  assert.match(authSetupProblem(config({}))!, /no credentials are configured/);
  const tokens = { tokens: [{ subject: 'ops', token: 'a-long-enough-static-token' }] };
  assert.match(authSetupProblem(config({ auth: tokens }))!, /authorization\.rules is empty/);
  assert.equal(
    authSetupProblem(config({ auth: tokens, authorization: { rules: [{ kind: 'token', subject: '^ops$', roles: ['read'] }] } })),
    undefined,
  );
});

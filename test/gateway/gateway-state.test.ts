/**
 * The gateway's own state (src/gateway/modules/gateway-state.ts): the base URL is the configured one, else the bound
 * HTTP URL; the drain turns the state draining before its listeners run, runs them in the order added, once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createGatewayState } from '../../src/gateway/modules/gateway-state.js';
import { createSilentLogger } from '../../src/shared/logger.js';

test('the configured base URL wins over the bound one; without it the bound one is taken', () => {
  const configured = createGatewayState('https://outpost.example', createSilentLogger());
  configured.listeningAt('http://127.0.0.1:7002');
  assert.equal(configured.baseUrl(), 'https://outpost.example');
  const bound = createGatewayState(undefined, createSilentLogger());
  assert.equal(bound.baseUrl(), '');
  bound.listeningAt('http://127.0.0.1:7002');
  assert.equal(bound.baseUrl(), 'http://127.0.0.1:7002');
});

test('the drain turns draining first, runs its listeners in order, once', async () => {
  const state = createGatewayState(undefined, createSilentLogger());
  const seen: string[] = [];
  state.onDrain(() => seen.push(`health (draining: ${state.isDraining()})`));
  state.onDrain(async () => seen.push('replica row'));
  assert.equal(state.isDraining(), false);
  await Promise.all([state.drain(), state.drain()]);
  await state.drain();
  assert.deepEqual(seen, ['health (draining: true)', 'replica row']);
  assert.equal(state.isDraining(), true);
});

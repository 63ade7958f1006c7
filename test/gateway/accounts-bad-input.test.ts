/**
 * Bad input on every account route (REST and AccountService RPCs): empty arrays, wrong types, unknown states and
 * keys, invalid names (quotes, SQL), duplicates, huge bodies, wrong content types and broken JSON all get a 4xx JSON
 * error (or a typed ConnectError) — and the database is byte-for-byte unchanged afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { AccountService } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { rest, snapshot } from './accounts-helpers.js';
import {
  Code,
  ConnectError,
  configMap,
  connectAgent,
  event,
  events,
  EventType,
  openAgentStream,
  type TestAgentStream,
} from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const MAX_BODY = 4096;
const SQL_NAME = "a'; drop table accounts; --";
const QUOTED = 'acc"ount';

/** Bodies every definition route must refuse with 400. */
const BAD_DEFINITIONS: [string, unknown][] = [
  ['empty array', []],
  ['object instead of array', { name: 'x' }],
  ['string', 'x'],
  ['null', null],
  ['array of numbers', [1, 2]],
  ['missing name', [{ kubeconfigFile: '/k' }]],
  ['number name', [{ name: 5 }]],
  ['upper-case name', [{ name: 'Bad Name' }]],
  ['empty name', [{ name: '' }]],
  ['SQL in name', [{ name: SQL_NAME }]],
  ['quote in name', [{ name: QUOTED }]],
  ['name too long', [{ name: 'a'.repeat(254) }]],
  ['duplicate names', [{ name: 'dup' }, { name: 'dup' }]],
  ['unknown key', [{ name: 'x', bogus: true }]],
  ['namespaces not an array', [{ name: 'x', namespaces: 'ns' }]],
  ['serviceAccount not a boolean', [{ name: 'x', serviceAccount: 'yes' }]],
  ['bad kind', [{ name: 'x', kinds: ['not a kind!'] }]],
  ['bad zone', [{ name: 'x', zoneId: "z'1" }]],
  ['bad CRD scope', [{ name: 'x', customResourceDefinitions: [{ kind: 'W.example.com', scope: 'Galaxy' }] }]],
  ['nested object property', [{ name: 'x', properties: { a: { b: 1 } } }]],
  // regressions found by the hostile-input suite: Postgres refused these inside the insert (a 500)
  ['NUL in a property value', [{ name: 'x', properties: { team: 'a\u0000b' } }]],
  ['lone surrogate in a property value', [{ name: 'x', properties: { team: 'a\udf33b' } }]],
];

const BAD_STATE_CHANGES: [string, unknown][] = [
  ['empty array', []],
  ['object', { name: 'seed-dyn', state: 'ACTIVE' }],
  ['unknown state', [{ name: 'seed-dyn', state: 'SLEEPING' }]],
  ['lower-case state', [{ name: 'seed-dyn', state: 'active' }]],
  ['missing state', [{ name: 'seed-dyn' }]],
  ['state as number', [{ name: 'seed-dyn', state: 1 }]],
  ['zoneId as number', [{ name: 'seed-dyn', state: 'ACTIVE', zoneId: 5 }]],
  ['SQL in name', [{ name: SQL_NAME, state: 'ACTIVE' }]],
  [
    'duplicate names',
    [
      { name: 'seed-dyn', state: 'ACTIVE' },
      { name: 'seed-dyn', state: 'INACTIVE' },
    ],
  ],
  ['unknown key', [{ name: 'seed-dyn', state: 'ACTIVE', force: true }]],
];

const BAD_NAME_LISTS: [string, unknown][] = [
  ['empty array', []],
  ['object', { names: ['seed-dyn'] }],
  ['string', 'seed-dyn'],
  ['numbers', [1]],
  ['empty name', ['']],
  ['SQL in name', [SQL_NAME]],
  ['duplicate names', ['seed-dyn', 'seed-dyn']],
];

for (const driver of testDrivers()) {
  describe(`account routes refuse bad input and change nothing (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let agent: TestAgentStream;
    let before_: string;
    before(async () => {
      t = await startTestGateway(driver, { accounts: { maxBodyBytes: MAX_BODY, maxPageSize: 50 } });
      agent = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(agent, 'agent-seed', [{ name: 'seed-agent' }]);
      agent.send(events(1, [event('seed-agent', EventType.ADDED, configMap('cm', 7))]));
      await agent.waitForAck(1);
      assert.equal((await rest(t, 'POST', '/armory/accounts', [{ name: 'seed-dyn', kubeconfigFile: '/k' }])).status, 201);
      before_ = await snapshot(t);
    });
    after(async () => {
      agent?.end();
      await agent?.ended;
      await t?.close();
    });

    const expect4xx = async (
      what: string,
      method: string,
      path: string,
      body: unknown,
      status: number,
      opts: { raw?: boolean; headers?: Record<string, string> } = {},
    ) => {
      const res = await rest(t, method, path, body, opts);
      assert.equal(res.status, status, `${what}: ${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
      assert.match(res.contentType, /application\/json/, what);
      assert.equal(typeof res.body.error, 'string', what);
      assert.equal(typeof res.body.message, 'string', what);
      assert.equal(await snapshot(t), before_, `${what}: the database changed`);
    };

    for (const [method, path] of [
      ['POST', '/armory/accounts'],
      ['POST', '/armory/accounts/dynamic'],
      ['PATCH', '/armory/accounts/dynamic'],
      ['PUT', '/armory/accounts/dynamic'],
    ] as const) {
      test(`${method} ${path}: bad definitions → 400, wrong content type → 415, bad JSON → 400, huge body → 413`, async () => {
        for (const [what, body] of BAD_DEFINITIONS) await expect4xx(what, method, path, body, 400);
        await expect4xx('text/plain', method, path, JSON.stringify([{ name: 'x' }]), 415, {
          raw: true,
          headers: { 'Content-Type': 'text/plain' },
        });
        await expect4xx('no content type', method, path, undefined, 415);
        await expect4xx('broken JSON', method, path, '[{"name": "x"', 400, { raw: true });
        await expect4xx('empty body', method, path, '', 400, { raw: true });
        await expect4xx('huge body', method, path, [{ name: 'x', properties: { big: 'y'.repeat(MAX_BODY) } }], 413);
      });
    }

    test('a huge body without Content-Length (chunked) is cut off at maxBodyBytes → 413', async () => {
      const chunk = new TextEncoder().encode(`[${'{"name":"x"},'.repeat(200)}`);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 10; i++) controller.enqueue(chunk);
          controller.close();
        },
      });
      const res = await fetch(`${t.gateway.httpUrl}/armory/accounts`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      assert.equal(res.status, 413);
      assert.equal(((await res.json()) as any).error, 'payload_too_large');
      assert.equal(await snapshot(t), before_);
    });

    test('PATCH /armory/accounts: bad state changes → 400; unknown names → 404 listing them', async () => {
      for (const [what, body] of BAD_STATE_CHANGES) await expect4xx(what, 'PATCH', '/armory/accounts', body, 400);
      const res = await rest(t, 'PATCH', '/armory/accounts', [
        { name: 'seed-dyn', state: 'ACTIVE' },
        { name: 'ghost', state: 'ACTIVE' },
      ]);
      assert.equal(res.status, 404);
      assert.deepEqual(res.body.unknown, ['ghost']);
      assert.equal(await snapshot(t), before_);
      await expect4xx('zone on an agent account', 'PATCH', '/armory/accounts', [{ name: 'seed-agent', state: 'ACTIVE', zoneId: 'z' }], 409);
    });

    test('DELETE /armory/accounts: bad name lists → 400; unknown names → 404; streamed agent account → 409', async () => {
      for (const [what, body] of BAD_NAME_LISTS) await expect4xx(what, 'DELETE', '/armory/accounts', body, 400);
      await expect4xx('unknown', 'DELETE', '/armory/accounts', ['seed-dyn', 'ghost'], 404);
      await expect4xx('streamed', 'DELETE', '/armory/accounts', ['seed-dyn', 'seed-agent'], 409);
    });

    test('PATCH /armory/accounts/dynamic on an account declared by an agent → 409', async () => {
      await expect4xx('agent account', 'PATCH', '/armory/accounts/dynamic', [{ name: 'seed-agent', kubeconfigFile: '/k' }], 409);
      await expect4xx('agent account (PUT)', 'PUT', '/armory/accounts/dynamic', [{ name: 'seed-agent', kubeconfigFile: '/k' }], 409);
    });

    test('name paths: quotes and SQL → 400, unknown → 404, binding of a streamed account → 409', async () => {
      for (const name of [SQL_NAME, QUOTED, 'UPPER', '-x', 'a'.repeat(254)]) {
        const path = `/armory/accounts/${encodeURIComponent(name)}`;
        await expect4xx(`GET ${name}`, 'GET', path, undefined, 400);
        await expect4xx(`DELETE ${name}`, 'DELETE', path, undefined, 400);
        await expect4xx(`DELETE binding ${name}`, 'DELETE', `${path}/binding`, undefined, 400);
      }
      await expect4xx('unknown', 'GET', '/armory/accounts/ghost', undefined, 404);
      await expect4xx('unknown', 'DELETE', '/armory/accounts/ghost', undefined, 404);
      await expect4xx('unknown binding', 'DELETE', '/armory/accounts/ghost/binding', undefined, 404);
      await expect4xx('streamed binding', 'DELETE', '/armory/accounts/seed-agent/binding', undefined, 409);
    });

    test('GET /armory/accounts: bad page and limit → 400; other methods → 405', async () => {
      for (const q of ['page=0', 'page=-1', 'page=x', 'limit=0', 'limit=51', 'limit=1e3', `limit=${encodeURIComponent(SQL_NAME)}`]) {
        await expect4xx(q, 'GET', `/armory/accounts?${q}`, undefined, 400);
      }
      await expect4xx('PUT', 'PUT', '/armory/accounts', [{ name: 'x' }], 405);
      await expect4xx('GET dynamic', 'POST', '/armory/accounts/seed-dyn', [{ name: 'x' }], 405);
      await expect4xx('PATCH binding', 'PATCH', '/armory/accounts/seed-dyn/binding', [], 405);
    });

    test('AccountService RPCs: INVALID_ARGUMENT / NOT_FOUND / ALREADY_EXISTS / FAILED_PRECONDITION, nothing changed', async () => {
      const client = createClient(AccountService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
      const expectCode = async (what: string, call: Promise<unknown>, code: Code) => {
        await assert.rejects(call, (err: unknown) => {
          assert.ok(err instanceof ConnectError, what);
          assert.equal(err.code, code, `${what}: ${err.message}`);
          return true;
        });
        assert.equal(await snapshot(t), before_, `${what}: the database changed`);
      };
      const spec = (name: string, extra: Record<string, unknown> = {}) => ({ definition: { name, ...extra } });
      await expectCode('create: empty', client.createAccounts({ accounts: [] }), Code.InvalidArgument);
      await expectCode('create: no definition', client.createAccounts({ accounts: [{ zoneId: 'z' }] }), Code.InvalidArgument);
      await expectCode('create: SQL name', client.createAccounts({ accounts: [spec(SQL_NAME)] }), Code.InvalidArgument);
      await expectCode('create: duplicate in request', client.createAccounts({ accounts: [spec('n1'), spec('n1')] }), Code.InvalidArgument);
      await expectCode(
        'create: bad kind',
        client.createAccounts({ accounts: [spec('n1', { kinds: ['bad kind'] })] }),
        Code.InvalidArgument,
      );
      await expectCode(
        'create: NUL in a property (hostile-input regression)',
        client.createAccounts({ accounts: [spec('n1', { properties: { team: 'a\u0000b' } })] }),
        Code.InvalidArgument,
      );
      await expectCode(
        'create: a leading BOM in the name (hostile-input regression: protobuf decoding dropped it, creating "bom")',
        client.createAccounts({ accounts: [spec('\ufeffbom')] }),
        Code.InvalidArgument,
      );
      await expectCode('create: existing', client.createAccounts({ accounts: [spec('n1'), spec('seed-dyn')] }), Code.AlreadyExists);
      await expectCode('put: agent account', client.putDynamicAccounts({ accounts: [spec('seed-agent')] }), Code.FailedPrecondition);
      await expectCode('states: empty', client.setAccountStates({ accounts: [] }), Code.InvalidArgument);
      await expectCode(
        'states: unknown state',
        client.setAccountStates({ accounts: [{ name: 'seed-dyn', state: 'PAUSED' }] }),
        Code.InvalidArgument,
      );
      await expectCode(
        'states: unknown account',
        client.setAccountStates({ accounts: [{ name: 'ghost', state: 'ACTIVE' }] }),
        Code.NotFound,
      );
      await expectCode('delete: empty', client.deleteAccounts({ names: [] }), Code.InvalidArgument);
      await expectCode('delete: quote', client.deleteAccounts({ names: [QUOTED] }), Code.InvalidArgument);
      await expectCode('delete: unknown', client.deleteAccounts({ names: ['ghost'] }), Code.NotFound);
      await expectCode('get: unknown', client.getAccount({ name: 'ghost' }), Code.NotFound);
      await expectCode('get: SQL', client.getAccount({ name: SQL_NAME }), Code.InvalidArgument);
      await expectCode('list: limit too large', client.listAccounts({ limit: 51 }), Code.InvalidArgument);
      await expectCode('list: bad name', client.listAccounts({ name: SQL_NAME }), Code.InvalidArgument);
      await expectCode('release: unknown', client.releaseBinding({ name: 'ghost' }), Code.NotFound);
      await expectCode('release: streamed', client.releaseBinding({ name: 'seed-agent' }), Code.FailedPrecondition);
    });
  });
}

/**
 * gRPC health checking and server reflection on a real gateway: Check and Watch over gRPC (HTTP/2) and Connect JSON,
 * NOT_SERVING once shutdown starts, health without credentials on a secure gateway while reflection needs `read`,
 * reflection v1 and v1alpha by hand-made requests (unknown names get an error_response and the stream goes on), and
 * `buf curl` listing and calling services through reflection alone (no --schema). The health state machine itself
 * (database down and back, timeouts, drain) runs against an in-memory transport with a fake ping.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { create, createFileRegistry, fromBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckResponse,
} from '../../src/gen/grpc/health/v1/health_pb.js';
import {
  ServerReflection as ReflectionV1,
  ServerReflectionRequestSchema as RequestV1Schema,
  type ServerReflectionResponse,
} from '../../src/gen/grpc/reflection/v1/reflection_pb.js';
import {
  ServerReflection as ReflectionV1alpha,
  ServerReflectionRequestSchema as RequestV1alphaSchema,
} from '../../src/gen/grpc/reflection/v1alpha/reflection_pb.js';
import { createHealthService } from '../../src/gateway/grpc/health-service.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { testDrivers } from '../../testkit/databases.js';
import { startAuthGateway } from '../../testkit/auth-helpers.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const run = promisify(execFile);
const BUF = join(process.cwd(), 'node_modules', '.bin', 'buf');
const API_SERVICES = [
  'outpost.agent.v1.AgentService',
  'outpost.api.v1.ObjectService',
  'outpost.api.v1.AccountService',
  'outpost.api.v1.OperationService',
];
const READ_TOKEN = 'health-reader-token-0123456789';
const NOBODY_TOKEN = 'health-nobody-token-0123456789';

const healthClient = (baseUrl: string) => createClient(Health, createGrpcTransport({ baseUrl }));

/** Runs one reflection stream (v1) with the given requests; resolves with every response, in order. */
async function reflectV1(baseUrl: string, requests: MessageInitShape<typeof RequestV1Schema>[], headers?: Record<string, string>) {
  const client = createClient(ReflectionV1, createGrpcTransport({ baseUrl }));
  const out: ServerReflectionResponse[] = [];
  const input = (async function* () {
    for (const r of requests) yield create(RequestV1Schema, r);
  })();
  for await (const res of client.serverReflectionInfo(input, { headers, timeoutMs: 30_000 })) out.push(res);
  return out;
}

/** The FileDescriptorProtos of a file_descriptor_response, decoded. */
function filesOf(res: ServerReflectionResponse): FileDescriptorProto[] {
  assert.equal(res.messageResponse.case, 'fileDescriptorResponse', JSON.stringify(res.messageResponse));
  return res.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b));
}

async function expectCode(promise: Promise<unknown>, code: Code): Promise<ConnectError> {
  try {
    await promise;
  } catch (err) {
    const e = ConnectError.from(err);
    assert.equal(e.code, code, `${Code[e.code]}: ${e.rawMessage}`);
    return e;
  }
  assert.fail(`expected ${Code[code]}`);
}

for (const driver of testDrivers()) {
  describe(`gRPC health and reflection (${driver})`, () => {
    let t: TestGateway;
    before(async () => {
      t = await startTestGateway(driver, { id: 'gw-health' });
    });
    after(async () => {
      await t?.close();
    });

    test('Check: "" and every served service are SERVING, over gRPC and over Connect JSON', async () => {
      const client = healthClient(t.gateway.grpcUrl);
      for (const service of ['', ...API_SERVICES]) {
        const res = await client.check({ service }, { timeoutMs: 30_000 });
        assert.equal(res.status, ServingStatus.SERVING, service);
      }
      const res = await fetch(`${t.gateway.httpUrl}/grpc.health.v1.Health/Check`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"service":""}',
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: 'SERVING' });
    });

    test('unknown service: Check fails NOT_FOUND; Watch sends SERVICE_UNKNOWN and keeps the call open', async () => {
      const client = healthClient(t.gateway.grpcUrl);
      const err = await expectCode(client.check({ service: 'no.such.Service' }), Code.NotFound);
      assert.equal(err.rawMessage, 'unknown service no.such.Service');

      const abort = new AbortController();
      const it = client.watch({ service: 'no.such.Service' }, { signal: abort.signal })[Symbol.asyncIterator]();
      const first = await it.next();
      assert.equal((first.value as HealthCheckResponse).status, ServingStatus.SERVICE_UNKNOWN);
      const second = it.next();
      const pending = await Promise.race([second.then(() => 'ended'), new Promise((r) => setTimeout(() => r('open'), 300))]);
      assert.equal(pending, 'open', 'the Watch call stays open');
      abort.abort();
      await second.catch(() => {});
    });

    test('reflection v1: list_services, file_containing_symbol with dependencies (each sent once per stream), file_by_filename', async () => {
      const responses = await reflectV1(t.gateway.grpcUrl, [
        { host: 'h', messageRequest: { case: 'listServices', value: '' } },
        { messageRequest: { case: 'fileContainingSymbol', value: 'outpost.api.v1.ObjectService' } },
        { messageRequest: { case: 'fileContainingSymbol', value: 'outpost.api.v1.AccountService.ListAccounts' } },
        { messageRequest: { case: 'fileByFilename', value: 'google/protobuf/timestamp.proto' } },
        { messageRequest: { case: 'fileContainingSymbol', value: 'outpost.api.v1.ListObjectsRequest' } },
      ]);
      assert.equal(responses.length, 5);
      const [list, object, account, timestamp, again] = responses;

      assert.equal(list!.validHost, 'h');
      assert.equal(list!.originalRequest?.messageRequest.case, 'listServices');
      assert.equal(list!.messageResponse.case, 'listServicesResponse');
      const names = list!.messageResponse.value.service.map((s: { name: string }) => s.name);
      for (const s of [
        ...API_SERVICES,
        'grpc.health.v1.Health',
        'grpc.reflection.v1.ServerReflection',
        'grpc.reflection.v1alpha.ServerReflection',
      ]) {
        assert.ok(names.includes(s), `${s} listed in ${names.join(', ')}`);
      }

      const objectFiles = filesOf(object!);
      assert.equal(objectFiles[0]!.name, 'outpost/api/v1/object_service.proto');
      assert.deepEqual(objectFiles.map((f) => f.name).sort(), [
        'google/protobuf/struct.proto',
        'google/protobuf/timestamp.proto',
        'outpost/api/v1/object_service.proto',
      ]);
      const accountFiles = filesOf(account!);
      assert.equal(accountFiles[0]!.name, 'outpost/api/v1/account_service.proto');
      assert.ok(
        accountFiles.some((f) => f.name === 'outpost/agent/v1/agent.proto'),
        'transitive dependency',
      );
      assert.ok(!accountFiles.some((f) => f.name === 'google/protobuf/timestamp.proto'), 'already sent on this stream');
      // The requested file is always sent, even when sent before.
      assert.deepEqual(
        filesOf(timestamp!).map((f) => f.name),
        ['google/protobuf/timestamp.proto'],
      );
      assert.deepEqual(
        filesOf(again!).map((f) => f.name),
        ['outpost/api/v1/object_service.proto'],
      );

      // What was received is complete: the files form a registry that resolves the services and their messages.
      const received = new Map([...objectFiles, ...accountFiles].map((f) => [f.name, f]));
      // Dependencies first (createFileRegistry's resolver variant mis-orders diamond imports, so order them here).
      const registryOf = (name: string) => {
        const ordered: FileDescriptorProto[] = [];
        const visit = (n: string) => {
          const f = received.get(n);
          assert.ok(f, `${n} received`);
          if (ordered.includes(f)) return;
          f.dependency.forEach(visit);
          ordered.push(f);
        };
        visit(name);
        return createFileRegistry(create(FileDescriptorSetSchema, { file: ordered }));
      };
      const accounts = registryOf('outpost/api/v1/account_service.proto').getService('outpost.api.v1.AccountService');
      assert.ok(accounts?.methods.some((m) => m.name === 'ListAccounts'));
      const objects = registryOf('outpost/api/v1/object_service.proto');
      assert.ok(objects.getMessage('outpost.api.v1.ListObjectsRequest')?.fields.some((f) => f.name === 'account'));
      assert.equal(accountFiles[0]!.syntax, 'proto3');
    });

    test('reflection v1: unknown file, symbol or extension gets an error_response NOT_FOUND and the stream continues', async () => {
      const responses = await reflectV1(t.gateway.grpcUrl, [
        { messageRequest: { case: 'fileByFilename', value: 'no/such.proto' } },
        { messageRequest: { case: 'fileContainingSymbol', value: 'no.such.Symbol' } },
        {
          messageRequest: {
            case: 'fileContainingExtension',
            value: { containingType: 'outpost.api.v1.ListObjectsRequest', extensionNumber: 1000 },
          },
        },
        { messageRequest: { case: 'allExtensionNumbersOfType', value: 'no.such.Message' } },
        { messageRequest: { case: 'allExtensionNumbersOfType', value: 'outpost.api.v1.ListObjectsRequest' } },
        { messageRequest: { case: undefined } },
        { messageRequest: { case: 'fileContainingSymbol', value: 'grpc.health.v1.Health.Watch' } },
      ]);
      assert.equal(responses.length, 7);
      for (const [i, what] of [
        [0, 'no/such.proto'],
        [1, 'no.such.Symbol'],
        [2, '1000'],
        [3, 'no.such.Message'],
      ] as const) {
        const r = responses[i]!.messageResponse;
        assert.equal(r.case, 'errorResponse', `request ${i}`);
        assert.equal(r.value.errorCode, Code.NotFound);
        assert.ok(r.value.errorMessage.includes(what), r.value.errorMessage);
      }
      const numbers = responses[4]!.messageResponse;
      assert.equal(numbers.case, 'allExtensionNumbersResponse');
      assert.deepEqual([numbers.value.baseTypeName, numbers.value.extensionNumber], ['outpost.api.v1.ListObjectsRequest', []]);
      const empty = responses[5]!.messageResponse;
      assert.equal(empty.case, 'errorResponse');
      assert.equal(empty.value.errorCode, Code.InvalidArgument);
      assert.equal(filesOf(responses[6]!)[0]!.name, 'grpc/health/v1/health.proto');
    });

    test('reflection v1alpha: a hand-made list_services and file_containing_symbol', async () => {
      const client = createClient(ReflectionV1alpha, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
      const input = (async function* () {
        yield create(RequestV1alphaSchema, { messageRequest: { case: 'listServices', value: '*' } });
        yield create(RequestV1alphaSchema, { messageRequest: { case: 'fileContainingSymbol', value: 'no.such.Thing' } });
        yield create(RequestV1alphaSchema, { messageRequest: { case: 'fileContainingSymbol', value: 'outpost.agent.v1.AgentService' } });
      })();
      const out = [];
      for await (const res of client.serverReflectionInfo(input, { timeoutMs: 30_000 })) out.push(res);
      assert.equal(out.length, 3);
      assert.equal(out[0]!.$typeName, 'grpc.reflection.v1alpha.ServerReflectionResponse');
      assert.equal(out[0]!.messageResponse.case, 'listServicesResponse');
      const names = out[0]!.messageResponse.value.service.map((s: { name: string }) => s.name);
      assert.ok(names.includes('outpost.api.v1.ObjectService'), names.join(', '));
      assert.equal(out[1]!.messageResponse.case, 'errorResponse');
      assert.equal(out[1]!.messageResponse.value.errorCode, Code.NotFound);
      assert.equal(out[2]!.messageResponse.case, 'fileDescriptorResponse');
      const files = out[2]!.messageResponse.value.fileDescriptorProto.map((b: Uint8Array) => fromBinary(FileDescriptorProtoSchema, b).name);
      assert.deepEqual(files.slice(0, 3), [
        'outpost/agent/v1/agent.proto',
        'outpost/agent/v1/kube.proto',
        'outpost/agent/v1/operation.proto',
      ]);
    });

    test('buf curl lists the services and calls AccountService/ListAccounts through reflection alone', async () => {
      const base = ['curl', '--protocol', 'grpc', '--http2-prior-knowledge'];
      const listed = await run(BUF, [...base, '--list-services', t.gateway.grpcUrl], { timeout: 30_000 });
      const services = listed.stdout.trim().split('\n');
      for (const s of [...API_SERVICES, 'grpc.health.v1.Health']) assert.ok(services.includes(s), `${s} in ${listed.stdout}`);

      const called = await run(BUF, [...base, '-d', '{}', `${t.gateway.grpcUrl}/outpost.api.v1.AccountService/ListAccounts`], {
        timeout: 30_000,
      });
      assert.equal(typeof JSON.parse(called.stdout), 'object', called.stdout);

      const methods = await run(BUF, [...base, '--reflect-protocol', 'grpc-v1alpha', '--list-methods', t.gateway.grpcUrl], {
        timeout: 30_000,
      });
      assert.ok(methods.stdout.split('\n').includes('outpost.api.v1.ObjectService/ListObjects'), methods.stdout);

      const checked = await run(BUF, [...base, '-d', '{"service":""}', `${t.gateway.grpcUrl}/grpc.health.v1.Health/Check`], {
        timeout: 30_000,
      });
      assert.deepEqual(JSON.parse(checked.stdout), { status: 'SERVING' });
    });
  });
}

describe('gRPC health while the gateway shuts down', () => {
  test('Watch receives SERVING, then NOT_SERVING when close() starts draining, then a clean end that does not hold shutdown', async () => {
    const t = await startTestGateway('pglite', { id: 'gw-health-drain' });
    let closing: Promise<void> | undefined;
    try {
      const seen: ServingStatus[] = [];
      for await (const res of healthClient(t.gateway.grpcUrl).watch({ service: 'outpost.api.v1.ObjectService' }, { timeoutMs: 60_000 })) {
        seen.push(res.status);
        if (seen.length === 1) closing = t.close();
      }
      assert.deepEqual(seen, [ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
      // The Watch ended cleanly, so the gateway ended it: one left open would have kept the servers waiting out their
      // 5 s grace period and then been cut, which ends the loop above with an error instead. (No wall-clock bound on
      // close: on a loaded machine a clean close can take that long too.)
      await closing;
    } finally {
      await (closing ?? t.close());
    }
  });
});

describe('gRPC health and reflection on a secure gateway', () => {
  let t: TestGateway;
  before(async () => {
    t = await startAuthGateway({
      id: 'gw-health-secure',
      auth: {
        tokens: [
          { subject: 'reader', token: READ_TOKEN },
          { subject: 'nobody', token: NOBODY_TOKEN },
        ],
      },
      authorization: { rules: [{ kind: 'token', subject: '^reader$', roles: ['read'] }] },
    });
  });
  after(async () => {
    await t?.close();
  });

  test('health needs no credentials (and ignores bad ones), over gRPC and Connect JSON', async () => {
    const client = healthClient(t.gateway.grpcUrl);
    assert.equal((await client.check({ service: '' })).status, ServingStatus.SERVING);
    assert.equal(
      (await client.check({ service: '' }, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status,
      ServingStatus.SERVING,
    );
    const it = client.watch({ service: '' }, { timeoutMs: 30_000 })[Symbol.asyncIterator]();
    assert.equal(((await it.next()).value as HealthCheckResponse).status, ServingStatus.SERVING);
    await it.return?.();
    const res = await fetch(`${t.gateway.httpUrl}/grpc.health.v1.Health/Check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'SERVING' });
  });

  test('reflection needs read: UNAUTHENTICATED without credentials, PERMISSION_DENIED without the role, answers a reader', async () => {
    const list = { messageRequest: { case: 'listServices' as const, value: '' } };
    await expectCode(reflectV1(t.gateway.grpcUrl, [list]), Code.Unauthenticated);
    const denied = await expectCode(
      reflectV1(t.gateway.grpcUrl, [list], { authorization: `Bearer ${NOBODY_TOKEN}` }),
      Code.PermissionDenied,
    );
    assert.match(denied.rawMessage, /"read"/);
    const [res] = await reflectV1(t.gateway.grpcUrl, [list], { authorization: `Bearer ${READ_TOKEN}` });
    assert.equal(res!.messageResponse.case, 'listServicesResponse');
  });
});

describe('health state', () => {
  const start = (ping: () => Promise<void>, timeoutMs = 1000) => {
    const health = createHealthService({ services: ['a.B'], ping, logger: createSilentLogger(), intervalMs: 60_000, timeoutMs });
    const client = createClient(
      Health,
      createRouterTransport((router) => router.service(Health, health.impl)),
    );
    return { health, client };
  };

  test('database down and back: Check follows, Watch gets one message per change; drain is for good; close ends Watch', async () => {
    let up = true;
    const { health, client } = start(async () => {
      if (!up) throw new Error('connection refused');
    });
    const seen: ServingStatus[] = [];
    let changed: () => void = () => {};
    const watching = (async () => {
      for await (const res of client.watch({ service: 'a.B' })) {
        seen.push(res.status);
        changed();
      }
    })();
    const nextMessage = () => new Promise<void>((r) => (changed = r));

    if (seen.length === 0) await nextMessage();
    assert.deepEqual(seen, [ServingStatus.SERVING]);
    await health.refresh();
    assert.deepEqual(seen, [ServingStatus.SERVING], 'no message without a change');

    up = false;
    let next = nextMessage();
    await health.refresh();
    await next;
    assert.equal((await client.check({ service: '' })).status, ServingStatus.NOT_SERVING);
    assert.equal((await client.check({ service: 'a.B' })).status, ServingStatus.NOT_SERVING);

    up = true;
    next = nextMessage();
    await health.refresh();
    await next;
    assert.equal((await client.check({})).status, ServingStatus.SERVING);

    next = nextMessage();
    health.drain();
    await next;
    await health.refresh();
    assert.equal(health.status(), ServingStatus.NOT_SERVING, 'a good ping after drain changes nothing');
    await health.close();
    await watching;
    assert.deepEqual(seen, [ServingStatus.SERVING, ServingStatus.NOT_SERVING, ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
  });

  test('a ping slower than the timeout counts as unreachable', async () => {
    const { health } = start(() => new Promise(() => {}), 50);
    await health.refresh();
    assert.equal(health.status(), ServingStatus.NOT_SERVING);
    await health.close();
  });
});

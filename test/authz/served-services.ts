/**
 * Which RPC services exist and which the gateway serves: every service descriptor generated into `src/gen` (read by
 * importing each `*_pb.ts`, so a new proto file is seen without editing this list), and the names a running gateway
 * lists through gRPC server reflection (which describes exactly what it registered).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { create, type DescService } from '@bufbuild/protobuf';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { ServerReflection, ServerReflectionRequestSchema } from '../../src/gen/grpc/reflection/v1/reflection_pb.js';

const GEN_DIR = fileURLToPath(new URL('../../src/gen', import.meta.url));

function pbFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) pbFiles(path, out);
    else if (entry.endsWith('_pb.ts')) out.push(path);
  }
  return out;
}

/** Every service descriptor generated into `src/gen`, by fully qualified name. */
export async function generatedServices(): Promise<Map<string, DescService>> {
  const out = new Map<string, DescService>();
  for (const file of pbFiles(GEN_DIR)) {
    const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    for (const value of Object.values(mod)) {
      const desc = value as Partial<DescService> | undefined;
      if (desc && typeof desc === 'object' && desc.kind === 'service' && typeof desc.typeName === 'string')
        out.set(desc.typeName, desc as DescService);
    }
  }
  return out;
}

/** The service names a gateway serves, from its reflection service (`list_services`), sorted. */
export async function reflectedServiceNames(grpcUrl: string, authorization: string): Promise<string[]> {
  const client = createClient(ServerReflection, createGrpcTransport({ baseUrl: grpcUrl }));
  const abort = new AbortController();
  const requests = (async function* () {
    yield create(ServerReflectionRequestSchema, { messageRequest: { case: 'listServices', value: '' } });
    await new Promise((resolve) => abort.signal.addEventListener('abort', resolve, { once: true }));
  })();
  try {
    for await (const res of client.serverReflectionInfo(requests, {
      headers: { authorization },
      signal: abort.signal,
      timeoutMs: 30_000,
    })) {
      if (res.messageResponse.case !== 'listServicesResponse') throw new Error(`reflection answered ${res.messageResponse.case}`);
      return res.messageResponse.value.service.map((s) => s.name).sort();
    }
    throw new Error('reflection ended without an answer');
  } finally {
    abort.abort();
  }
}

/**
 * gRPC server reflection (`grpc.reflection.v1.ServerReflection`, and the older `grpc.reflection.v1alpha` that some
 * clients still speak) so grpcurl and `buf curl` can call the gateway without a copy of its protos: they list the
 * services, then fetch the FileDescriptorProtos describing them (with every transitive dependency, well-known types
 * included) and build requests from those.
 *
 * The descriptors are the ones embedded in the generated code (`src/gen`), so reflection always describes exactly
 * what this build serves. Every answer is a response on the stream: a request that names an unknown file or symbol
 * gets an `error_response` (NOT_FOUND) and the stream continues.
 */
import { create, fromBinary, toBinary, type DescFile, type DescMessage, type DescService, type MessageInitShape } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { Code, type ServiceImpl } from '@connectrpc/connect';
import {
  ServerReflection as ServerReflectionV1,
  ServerReflectionRequestSchema,
  ServerReflectionResponseSchema,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from '../../gen/grpc/reflection/v1/reflection_pb.js';
import {
  ServerReflection as ServerReflectionV1alpha,
  ServerReflectionRequestSchema as V1alphaRequestSchema,
  ServerReflectionResponseSchema as V1alphaResponseSchema,
} from '../../gen/grpc/reflection/v1alpha/reflection_pb.js';

export { ServerReflectionV1, ServerReflectionV1alpha };

/** What reflection describes. */
export interface ReflectionServiceOptions {
  /**
   * The services the gateway serves (their generated descriptors). Both reflection services are added; list Health
   * too when it is served. Only these services and the files they need are described.
   */
  services: readonly DescService[];
}

/** The two reflection implementations, to register on the router under their own descriptors. */
export interface ReflectionServices {
  readonly v1: ServiceImpl<typeof ServerReflectionV1>;
  readonly v1alpha: ServiceImpl<typeof ServerReflectionV1alpha>;
}

type Answer = MessageInitShape<typeof ServerReflectionResponseSchema>['messageResponse'];

/** Builds the reflection services from the given service descriptors (indexed once, here). */
export function createReflectionServices(options: ReflectionServiceOptions): ReflectionServices {
  const services = [...options.services, ServerReflectionV1, ServerReflectionV1alpha];
  const index = indexFiles(services);
  const serviceNames = [...new Set(services.map((s) => s.typeName))].sort();

  /** The file (first, always) and those of its transitive dependencies this stream has not received yet. */
  const withDependencies = (file: DescFile, sent: Set<string>): Answer => {
    const out: Uint8Array[] = [];
    const seen = new Set<string>();
    const queue = [file];
    for (let f = queue.shift(); f; f = queue.shift()) {
      if (seen.has(f.proto.name)) continue;
      seen.add(f.proto.name);
      if (out.length === 0 || !sent.has(f.proto.name)) {
        sent.add(f.proto.name);
        out.push(index.bytes(f));
      }
      queue.push(...f.dependencies);
    }
    return { case: 'fileDescriptorResponse', value: { fileDescriptorProto: out } };
  };

  const notFound = (message: string): Answer => ({ case: 'errorResponse', value: { errorCode: Code.NotFound, errorMessage: message } });

  const answer = (req: ServerReflectionRequest, sent: Set<string>): ServerReflectionResponse => {
    const r = req.messageRequest;
    let messageResponse: Answer;
    switch (r.case) {
      case 'listServices':
        messageResponse = { case: 'listServicesResponse', value: { service: serviceNames.map((name) => ({ name })) } };
        break;
      case 'fileByFilename': {
        const file = index.files.get(r.value);
        messageResponse = file ? withDependencies(file, sent) : notFound(`unknown file ${r.value}`);
        break;
      }
      case 'fileContainingSymbol': {
        const file = index.symbols.get(r.value);
        messageResponse = file ? withDependencies(file, sent) : notFound(`unknown symbol ${r.value}`);
        break;
      }
      case 'fileContainingExtension': {
        const { containingType, extensionNumber } = r.value;
        const file = index.extensions.get(containingType)?.get(extensionNumber);
        messageResponse = file ? withDependencies(file, sent) : notFound(`no extension ${extensionNumber} of ${containingType}`);
        break;
      }
      case 'allExtensionNumbersOfType': {
        // As grpc-go: a known message without extensions gets an empty list, an unknown type NOT_FOUND.
        const numbers = index.extensions.get(r.value);
        messageResponse =
          numbers || index.messages.has(r.value)
            ? {
                case: 'allExtensionNumbersResponse',
                value: { baseTypeName: r.value, extensionNumber: [...(numbers?.keys() ?? [])].sort((a, b) => a - b) },
              }
            : notFound(`unknown message type ${r.value}`);
        break;
      }
      default:
        messageResponse = {
          case: 'errorResponse',
          value: { errorCode: Code.InvalidArgument, errorMessage: 'the request sets no message_request' },
        };
    }
    return create(ServerReflectionResponseSchema, { validHost: req.host, originalRequest: req, messageResponse });
  };

  return {
    v1: {
      async *serverReflectionInfo(requests) {
        const sent = new Set<string>();
        for await (const req of requests) yield answer(req, sent);
      },
    },
    // Same messages and field numbers as v1: converted through the wire format, answered by the same code.
    v1alpha: {
      async *serverReflectionInfo(requests) {
        const sent = new Set<string>();
        for await (const req of requests) {
          const res = answer(fromBinary(ServerReflectionRequestSchema, toBinary(V1alphaRequestSchema, req)), sent);
          yield fromBinary(V1alphaResponseSchema, toBinary(ServerReflectionResponseSchema, res));
        }
      },
    },
  };
}

interface FileIndex {
  /** By file name (`outpost/api/v1/object_service.proto`). */
  files: Map<string, DescFile>;
  /** Every fully qualified name a file declares (packages excluded): services, methods, messages, fields, oneofs, enums, enum values, extensions. */
  symbols: Map<string, DescFile>;
  /** Message type names. */
  messages: Set<string>;
  /** Extendee type name → extension number → declaring file. */
  extensions: Map<string, Map<number, DescFile>>;
  /** The serialized FileDescriptorProto of a file (computed once). */
  bytes(file: DescFile): Uint8Array;
}

function indexFiles(services: readonly DescService[]): FileIndex {
  const files = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    file.dependencies.forEach(visit);
  };
  services.forEach((s) => visit(s.file));

  const symbols = new Map<string, DescFile>();
  const messages = new Set<string>();
  const extensions = new Map<string, Map<number, DescFile>>();
  for (const file of files.values()) {
    const add = (name: string) => {
      if (!symbols.has(name)) symbols.set(name, file);
    };
    // Enum values are scoped like their enum (as siblings of it), per protobuf's name resolution.
    const addEnums = (enums: DescFile['enums'], scope: string) => {
      for (const e of enums) {
        add(e.typeName);
        for (const v of e.values) add(scope ? `${scope}.${v.name}` : v.name);
      }
    };
    const addExtensions = (exts: DescFile['extensions']) => {
      for (const x of exts) {
        add(x.typeName);
        let byNumber = extensions.get(x.extendee.typeName);
        if (!byNumber) extensions.set(x.extendee.typeName, (byNumber = new Map()));
        byNumber.set(x.number, file);
      }
    };
    const addMessage = (m: DescMessage) => {
      add(m.typeName);
      messages.add(m.typeName);
      for (const f of m.fields) add(`${m.typeName}.${f.name}`);
      for (const o of m.oneofs) add(`${m.typeName}.${o.name}`);
      addEnums(m.nestedEnums, m.typeName);
      addExtensions(m.nestedExtensions);
      m.nestedMessages.forEach(addMessage);
    };
    file.messages.forEach(addMessage);
    addEnums(file.enums, file.proto.package);
    addExtensions(file.extensions);
    for (const s of file.services) {
      add(s.typeName);
      for (const m of s.methods) add(`${s.typeName}.${m.name}`);
    }
  }

  const encoded = new Map<string, Uint8Array>();
  return {
    files,
    symbols,
    messages,
    extensions,
    bytes(file) {
      let b = encoded.get(file.proto.name);
      if (!b) encoded.set(file.proto.name, (b = toBinary(FileDescriptorProtoSchema, file.proto)));
      return b;
    },
  };
}

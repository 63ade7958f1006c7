/**
 * Just enough of the Kubernetes protobuf encoding to read access reviews. kubectl 1.32+ sends
 * SelfSubjectAccessReview/SelfSubjectRulesReview bodies as `application/vnd.kubernetes.protobuf` (a `k8s\0`
 * magic prefix and a `runtime.Unknown` envelope around the message); this decodes those two messages into their JSON
 * shape. Every other protobuf body is still answered 415.
 */
import { errors } from '../errors.js';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Fields = Map<number, (Buffer | number)[]>;

function readVarint(buf: Buffer, pos: { i: number }): number {
  let result = 0;
  let shift = 0;
  for (;;) {
    if (pos.i >= buf.length) throw new Error('truncated varint');
    const b = buf[pos.i++]!;
    result += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return result;
    shift += 7;
    if (shift > 63) throw new Error('varint too long');
  }
}

/** Splits one protobuf message into its fields (length-delimited as Buffers, varints as numbers). */
function readFields(buf: Buffer): Fields {
  const fields: Fields = new Map();
  const pos = { i: 0 };
  while (pos.i < buf.length) {
    const tag = readVarint(buf, pos);
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    let value: Buffer | number;
    if (wire === 0) value = readVarint(buf, pos);
    else if (wire === 2) {
      const len = readVarint(buf, pos);
      if (pos.i + len > buf.length) throw new Error('truncated field');
      value = buf.subarray(pos.i, pos.i + len);
      pos.i += len;
    } else if (wire === 1) {
      pos.i += 8;
      continue;
    } else if (wire === 5) {
      pos.i += 4;
      continue;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = fields.get(field) ?? [];
    list.push(value);
    fields.set(field, list);
  }
  return fields;
}

function str(fields: Fields, n: number): string | undefined {
  const v = fields.get(n)?.[0];
  return Buffer.isBuffer(v) ? v.toString('utf8') : undefined;
}

function msg(fields: Fields, n: number): Fields | undefined {
  const v = fields.get(n)?.[0];
  return Buffer.isBuffer(v) ? readFields(v) : undefined;
}

function clean(obj: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
}

/** True for the protobuf media type. */
export function isProtobuf(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'application/vnd.kubernetes.protobuf';
}

/** Decodes a protobuf SelfSubjectAccessReview or SelfSubjectRulesReview into JSON; 400 when malformed, 415 for other kinds. */
export function decodeReviewProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw errors.badRequest('protobuf body without the k8s magic prefix');
  try {
    const unknown = readFields(body.subarray(4));
    const typeMeta = msg(unknown, 1);
    const apiVersion = typeMeta ? str(typeMeta, 1) : undefined;
    const kind = typeMeta ? str(typeMeta, 2) : undefined;
    const raw = unknown.get(2)?.[0];
    const message = Buffer.isBuffer(raw) ? readFields(raw) : new Map();
    const spec = msg(message, 2) ?? new Map();
    if (kind === 'SelfSubjectAccessReview') {
      const ra = msg(spec, 1);
      const nra = msg(spec, 2);
      return {
        apiVersion,
        kind,
        spec: clean({
          resourceAttributes: ra
            ? clean({
                namespace: str(ra, 1),
                verb: str(ra, 2),
                group: str(ra, 3),
                version: str(ra, 4),
                resource: str(ra, 5),
                subresource: str(ra, 6),
                name: str(ra, 7),
              })
            : undefined,
          nonResourceAttributes: nra ? clean({ path: str(nra, 1), verb: str(nra, 2) }) : undefined,
        }),
      };
    }
    if (kind === 'SelfSubjectRulesReview') return { apiVersion, kind, spec: clean({ namespace: str(spec, 1) }) };
  } catch (err) {
    throw errors.badRequest(`malformed protobuf body: ${(err as Error).message}`);
  }
  throw errors.unsupportedMediaType('application/vnd.kubernetes.protobuf');
}

/**
 * What the agent takes out of an operation's result before it leaves the cluster (docs/security.md): the objects'
 * Secret data, scrubbed once more whatever the handler did, and the request's own Secret values from a failure's
 * message — the cluster may echo them (a bad name, a bad label, a policy's denial), and the gateway stores and shows
 * the message in plaintext, where it keeps the request sealed.
 */
import type { JsonObject } from '@bufbuild/protobuf';
import type { Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import { manifestSecretValues, patchSecretValues } from '../../shared/request-secret-values.js';
import { scrubObject } from '../../shared/secret-scrub.js';
import { createSecretValueMatcher } from '../../shared/secret-values.js';

/** `message` with the Secret values `operation`'s request carries (an apply's Secrets, a Secret patch's values) redacted. */
export function withoutRequestValues(operation: Operation, message: string): string {
  const spec = operation.spec;
  if (spec.case === 'apply') return createSecretValueMatcher(manifestSecretValues(spec.value.manifests)).redact(message);
  if (spec.case === 'patch') return createSecretValueMatcher(patchSecretValues(spec.value.kind, spec.value.patch)).redact(message);
  return message;
}

/** The result's objects with every Secret's data scrubbed (src/shared/secret-scrub.ts); none when there are none. */
export function scrubbedObjects(objects: readonly object[] | undefined): JsonObject[] {
  return (objects ?? []).map((o) => scrubObject(o) as JsonObject);
}

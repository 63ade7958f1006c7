import type { MessageInitShape } from '@bufbuild/protobuf';
import { RolloutAction } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import type { SubmitOperationRequestSchema } from '../../src/gen/outpost/api/v1/operation_service_pb.js';

/** The operations the dashboard's form can submit, by the value of its "Operation" select. */
export type OperationChoice = 'apply' | 'scale' | 'restart' | 'delete';

/** Every choice, in the order the form lists them. */
export const OPERATION_CHOICES: readonly OperationChoice[] = ['apply', 'scale', 'restart', 'delete'];

/** What the operation form holds: raw field values, as typed. */
export interface OperationDraft {
  op: OperationChoice;
  account: string;
  kind: string;
  namespace: string;
  name: string;
  /** Text of the Replicas field (scale only). */
  replicas: string;
  /** YAML or JSON manifests (apply only). */
  manifest: string;
}

/** A blank draft: scale a Deployment. */
export function createDraft(init: Partial<OperationDraft> = {}): OperationDraft {
  return { op: 'scale', account: '', kind: 'Deployment', namespace: '', name: '', replicas: '1', manifest: '', ...init };
}

/**
 * Turns a draft into a SubmitOperation request with wait=false (the form follows it with WaitOperation).
 * restart is a RolloutSpec with action RESTART; delete removes one object by name; apply sends the manifests with
 * the namespace as default. Field values are trimmed but otherwise sent as typed, so the server's own validation
 * (INVALID_ARGUMENT, NOT_FOUND) is what the user sees. Throws an Error only when Replicas is not a whole number,
 * which the request could not even carry.
 */
export function createSubmitRequest(draft: OperationDraft): MessageInitShape<typeof SubmitOperationRequestSchema> {
  const account = draft.account.trim();
  const target = { kind: draft.kind.trim(), namespace: draft.namespace.trim(), name: draft.name.trim() };
  switch (draft.op) {
    case 'apply':
      return {
        account,
        wait: false,
        spec: { case: 'apply', value: { manifests: draft.manifest, namespace: target.namespace } },
      };
    case 'scale': {
      const text = draft.replicas.trim();
      const replicas = Number(text);
      if (text === '' || !Number.isInteger(replicas) || Math.abs(replicas) > 2 ** 31 - 1) {
        throw new Error('Replicas must be a whole number.');
      }
      return { account, wait: false, spec: { case: 'scale', value: { ...target, replicas } } };
    }
    case 'restart':
      return { account, wait: false, spec: { case: 'rollout', value: { ...target, action: RolloutAction.RESTART } } };
    case 'delete':
      return { account, wait: false, spec: { case: 'delete', value: target } };
  }
}

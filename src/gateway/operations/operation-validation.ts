/**
 * Checks a SubmitOperationRequest and turns it into the Operation that is stored and sent: account and spec present,
 * id well-formed, timeout in (0, 1 h] (default from config), apply manifests non-empty and within the size limit, apply
 * manifests and patch documents nested within MAX_NESTING_DEPTH, and no JSON patch of a Secret that reads the Secret's
 * values (src/shared/secret-patch-rules.ts). Everything the gateway can decide without the cluster is decided here; the
 * agent checks the manifests' content.
 */
import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import type { Duration } from '@bufbuild/protobuf/wkt';
import { OperationSchema, PatchType, type Operation, type PatchSpec } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { SubmitOperationRequest } from '../../gen/outpost/api/v1/operation_service_pb.js';
import { textNestingProblem } from '../../shared/nesting-depth.js';
import { PatchTextError, parsePatchText } from '../../shared/patch-text.js';
import { isSecretKind } from '../../shared/secret-kind.js';
import { secretPatchProblem } from '../../shared/secret-patch-rules.js';
import { durationToMs, msToDuration } from '../../shared/durations.js';
import { invalidArgument } from '../http/errors.js';

/** Longest timeout an operation may ask for. */
export const MAX_TIMEOUT_MS = 3_600_000;

const ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
const SPEC_CASES = ['apply', 'delete', 'scale', 'patch', 'rollout', 'get', 'list', 'logs', 'history'] as const;

/** Limits the validation applies. */
export interface ValidationLimits {
  defaultTimeoutMs: number;
  maxManifestBytes: number;
}

/** A request that passed validation. */
export interface ValidSubmission {
  operation: Operation;
  /** The spec's case: apply, delete, … */
  type: string;
  timeoutMs: number;
  /** True when the client chose the id. */
  clientId: boolean;
}

/** Throws INVALID_ARGUMENT when an operation id is malformed. */
export function checkOperationId(id: string, field = 'id'): void {
  if (!ID_PATTERN.test(id)) {
    throw invalidArgument(`${field} must be 1–128 characters of A-Z, a-z, 0-9, '.', '_' and '-' (got ${JSON.stringify(id.slice(0, 140))})`);
  }
}

/** Validates the request; throws INVALID_ARGUMENT with a message naming the field. */
export function validateSubmission(req: SubmitOperationRequest, limits: ValidationLimits): ValidSubmission {
  if (!req.account.trim()) throw invalidArgument('account is required');
  if (req.id !== '') checkOperationId(req.id);
  const spec = req.spec;
  if (spec.case === undefined || !(SPEC_CASES as readonly string[]).includes(spec.case)) {
    throw invalidArgument(`an operation is required: set exactly one of ${SPEC_CASES.join(', ')}`);
  }
  const timeoutMs = req.timeout ? timeoutToMs(req.timeout) : limits.defaultTimeoutMs;
  if (spec.case === 'apply') {
    const bytes = Buffer.byteLength(spec.value.manifests, 'utf8');
    if (bytes > limits.maxManifestBytes) {
      throw invalidArgument(`apply.manifests is ${bytes} bytes; the limit is ${limits.maxManifestBytes} bytes`);
    }
    if (!spec.value.manifests.trim()) throw invalidArgument('apply.manifests is empty: give at least one manifest');
  }
  // Documents nested deeper than any manifest are refused before anything is stored (docs/hostile-input.md).
  const document = spec.case === 'apply' ? spec.value.manifests : spec.case === 'patch' ? spec.value.patch : undefined;
  const tooDeep =
    document === undefined ? undefined : textNestingProblem(document, `${spec.case}.${spec.case === 'apply' ? 'manifests' : 'patch'}`);
  if (tooDeep) throw invalidArgument(tooDeep);
  if (spec.case === 'patch') checkSecretPatch(spec.value);
  const id = req.id || randomUUID();
  const operation = create(OperationSchema, {
    id,
    account: req.account,
    timeout: msToDuration(timeoutMs),
    spec: { case: spec.case, value: spec.value } as Operation['spec'],
  });
  return { operation, type: spec.case, timeoutMs, clientId: req.id !== '' };
}

/**
 * Throws INVALID_ARGUMENT for a JSON patch of a Secret (the kind in any spelling) that reads the Secret's values, or
 * that does not parse (it could not be judged). Read exactly as the agent will read it.
 */
function checkSecretPatch(patch: PatchSpec): void {
  if (patch.type !== PatchType.JSON || !isSecretKind(patch.kind)) return;
  let ops: unknown;
  try {
    ops = parsePatchText(patch.patch);
  } catch (err) {
    if (!(err instanceof PatchTextError)) throw err;
    throw invalidArgument(`patch.patch of a Secret: ${err.message}`);
  }
  const problem = secretPatchProblem(ops);
  if (problem) throw invalidArgument(`JSON patch of Secret ${JSON.stringify(patch.name.slice(0, 253))} refused: ${problem}`);
}

function timeoutToMs(d: Duration): number {
  const ms = durationToMs(d);
  const shown = `${Number(d.seconds) + d.nanos / 1e9}s`;
  if (!(ms > 0)) throw invalidArgument(`timeout must be greater than 0 (got ${shown})`);
  if (ms > MAX_TIMEOUT_MS) throw invalidArgument(`timeout must be at most 1h (got ${shown})`);
  return Math.max(1, Math.round(ms));
}

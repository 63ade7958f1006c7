/**
 * Audit entries of Clouddriver ops submissions (`POST /kubernetes/ops`): one `kind: 'operation'` entry per
 * description, verb the Orca operation name (`deployManifest`, `scaleManifest`, …), operation id the task id (the
 * Outpost operations the task runs are `<task id>-<n>`). A refused submission is recorded too, with its HTTP status
 * — per description when the body could be read, else one entry with verb `ops`. Only naming fields of a description
 * are read (`location`, `manifestName`, and the account as the operation itself reads it: `account`, else
 * `credentials`), never a manifest.
 */
import type { AuditLog } from '../audit/audit-log.js';
import { operationEntry, type SubmissionOutcome } from '../audit/operation-audit.js';
import { accountOf, type Description } from './ops/description-fields.js';

/** A description as far as the audit log cares. */
export interface AuditedDescription {
  name: string;
  description: Description;
}

/** Records one entry per description (or one `ops` entry when none could be read). */
export function recordOpsSubmission(
  audit: Pick<AuditLog, 'record'>,
  items: readonly AuditedDescription[],
  outcome: SubmissionOutcome,
): void {
  if (items.length === 0) {
    audit.record(operationEntry(outcome, { account: '', verb: 'ops' }));
    return;
  }
  for (const { name, description } of items) {
    const [kind = '', objectName = ''] = text(description.manifestName).trim().split(/\s+/, 2);
    audit.record(
      operationEntry(outcome, {
        account: auditedAccount(description),
        verb: name,
        resource: kind,
        namespace: text(description.location),
        name: objectName,
      }),
    );
  }
}

/** The account the description runs on, read as the operation reads it; '' when it names none (a refusal). */
function auditedAccount(description: Description): string {
  try {
    return accountOf(description);
  } catch {
    return '';
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

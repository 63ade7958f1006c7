import { resolveKind, UnknownKindError } from '../../src/shared/kind-names.js';
import type { OperationDraft } from './operation-request.js';

/** The form fields a message can be tied to. */
export type DraftField = 'account' | 'kind' | 'name' | 'replicas' | 'manifest';

/** One message per invalid field; empty when the draft can be sent. */
export type DraftErrors = Partial<Record<DraftField, string>>;

/** The order the form shows its fields in: the first invalid one of these receives focus. */
export const FIELD_ORDER: readonly DraftField[] = ['account', 'kind', 'name', 'replicas', 'manifest'];

/**
 * Checks a draft the way the server would refuse it, so the page can say which field is wrong before sending
 * anything: an account is chosen, targeted operations name a known kind (kubectl names such as `deploy` are
 * accepted) and an object, scale has a whole, non-negative replica count, apply has a manifest. The server still
 * validates everything; this only saves a round trip and ties each message to its field.
 */
export function validateDraft(draft: OperationDraft): DraftErrors {
  const errors: DraftErrors = {};
  if (draft.account.trim() === '') errors.account = 'Choose an account.';
  if (draft.op === 'apply') {
    if (draft.manifest.trim() === '') errors.manifest = 'Paste at least one manifest.';
    return errors;
  }
  const kind = draft.kind.trim();
  if (kind === '') errors.kind = 'Enter a kind, e.g. Deployment or deploy.';
  else {
    try {
      resolveKind(kind);
    } catch (e) {
      if (!(e instanceof UnknownKindError)) throw e;
      errors.kind = `Unknown kind “${kind}”: use a Kind (Deployment), its plural or short name (deployments, deploy).`;
    }
  }
  if (draft.name.trim() === '') errors.name = 'Enter the name of the object.';
  if (draft.op === 'scale') {
    const text = draft.replicas.trim();
    const n = Number(text);
    if (text === '' || !Number.isInteger(n) || n < 0 || n > 2 ** 31 - 1) errors.replicas = 'Replicas must be a whole number, 0 or more.';
  }
  return errors;
}

/** The draft with its kind written as the Kind the API uses (`deploy` → `Deployment`); unchanged when unknown. */
export function normalizeDraft(draft: OperationDraft): OperationDraft {
  if (draft.op === 'apply' || draft.kind.trim() === '') return draft;
  try {
    return { ...draft, kind: resolveKind(draft.kind).kind };
  } catch {
    return draft;
  }
}

import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { operationStateName } from './format.js';
import { createDraft, createSubmitRequest, OPERATION_CHOICES, type OperationChoice, type OperationDraft } from './operation-request.js';
import { operationHref } from './operation-href.js';
import { summarizeOperation } from './operation-summary.js';
import { FIELD_ORDER, normalizeDraft, validateDraft, type DraftErrors, type DraftField } from './operation-validation.js';
import { useOperationRun } from './use-operation-run.js';

/** What an operation submitted from the page has come to (shown by {@link OutcomeText}). */
export type Outcome =
  | { kind: 'idle' }
  | { kind: 'submitting' }
  | { kind: 'record'; record: OperationRecord; following: boolean }
  | { kind: 'error'; text: string; record?: OperationRecord };

const LABELS: Record<OperationChoice, string> = {
  apply: 'Apply manifests',
  scale: 'Scale',
  restart: 'Restart rollout',
  delete: 'Delete object',
};

/** Props of OperationForm. */
export interface OperationFormProps {
  /** Initial field values (a row shortcut passes its object). Remount (change `key`) to apply new ones. */
  initial?: Partial<OperationDraft>;
  /** The accounts the user can see, offered in the Account select (an initial account not among them is kept). */
  accounts?: readonly string[];
  /** Focus the first field on mount (when opened from a shortcut). */
  autoFocus?: boolean;
}

/**
 * The "Submit operation" form: fields are checked first (validateDraft) and nothing is sent while one is invalid:
 * each message sits under its field (aria-invalid, aria-describedby) and focus moves to the first. Then
 * SubmitOperation with wait=false, and WaitOperation until terminal. The outcome
 * (state name without prefix, operation id, result message or error; or the RPC's own error) is shown in the
 * status element labelled "Operation result", rendered right after the form. A new submission stops following the
 * previous one.
 */
export function OperationForm({ initial, accounts = [], autoFocus = false }: OperationFormProps) {
  const [draft, setDraft] = useState<OperationDraft>(() => createDraft(initial));
  const { outcome, run, show } = useOperationRun();
  const [errors, setErrors] = useState<DraftErrors>({});
  const firstField = useRef<HTMLSelectElement>(null);
  const id = useId();
  const f = (name: string): string => `${id}-${name}`;

  useEffect(() => {
    if (autoFocus) firstField.current?.focus();
  }, []);

  const set =
    (field: keyof OperationDraft) =>
    (event: { currentTarget: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement }): void => {
      const value = event.currentTarget.value;
      const next = { ...draft, [field]: value };
      setDraft(next);
      // Once the form showed messages, it re-checks on every edit, so a message goes as soon as its field is fixed.
      if (Object.keys(errors).length > 0) setErrors(validateDraft(next));
    };

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const invalid = validateDraft(draft);
    setErrors(invalid);
    const first = FIELD_ORDER.find((field) => invalid[field]);
    if (first) {
      show({ kind: 'idle' });
      document.getElementById(f(first))?.focus();
      return;
    }
    let request: ReturnType<typeof createSubmitRequest>;
    try {
      request = createSubmitRequest(normalizeDraft(draft));
    } catch (e) {
      show({ kind: 'error', text: e instanceof Error ? e.message : String(e) });
      return;
    }
    await run(request);
  };

  const op = draft.op;
  const targeted = op !== 'apply';
  const names = draft.account && !accounts.includes(draft.account) ? [...accounts, draft.account] : accounts;
  /** aria props of a field: invalid when it has a message, described by the message (and its hint). */
  const check = (field: DraftField, hint?: string) => {
    const described = [errors[field] ? f(`${field}-error`) : '', hint ?? ''].filter(Boolean).join(' ');
    return { 'aria-invalid': errors[field] ? ('true' as const) : undefined, 'aria-describedby': described || undefined };
  };

  // The status element sits after the form, not inside it: its label "Operation result" would otherwise also
  // match the form's "Operation" field for label-based lookups scoped to the form.
  return (
    <>
      <form aria-label="Submit operation" class="operation-form" onSubmit={submit} noValidate>
        <div class="fields">
          <div class="field">
            <label for={f('op')}>Operation</label>
            <select id={f('op')} ref={firstField} value={op} onChange={set('op')}>
              {OPERATION_CHOICES.map((choice) => (
                <option key={choice} value={choice}>
                  {LABELS[choice]}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for={f('account')}>Account</label>
            <select id={f('account')} value={draft.account} onChange={set('account')} {...check('account')}>
              <option value="">Choose an account…</option>
              {names.map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
            <FieldError id={f('account-error')} text={errors.account} />
          </div>
          {targeted && (
            <div class="field">
              <label for={f('kind')}>Kind</label>
              <input id={f('kind')} value={draft.kind} onInput={set('kind')} autoComplete="off" spellcheck={false} {...check('kind')} />
              <FieldError id={f('kind-error')} text={errors.kind} />
            </div>
          )}
          <div class="field">
            <label for={f('namespace')}>Namespace</label>
            <input
              id={f('namespace')}
              value={draft.namespace}
              onInput={set('namespace')}
              autoComplete="off"
              spellcheck={false}
              aria-describedby={op === 'apply' ? f('namespace-hint') : undefined}
            />
            {op === 'apply' && (
              <p class="hint" id={f('namespace-hint')}>
                For manifests that name none; default “default”.
              </p>
            )}
          </div>
          {targeted && (
            <div class="field">
              <label for={f('name')}>Name</label>
              <input id={f('name')} value={draft.name} onInput={set('name')} autoComplete="off" spellcheck={false} {...check('name')} />
              <FieldError id={f('name-error')} text={errors.name} />
            </div>
          )}
          {op === 'scale' && (
            <div class="field">
              <label for={f('replicas')}>Replicas</label>
              <input
                id={f('replicas')}
                type="number"
                inputMode="numeric"
                step={1}
                min={0}
                value={draft.replicas}
                onInput={set('replicas')}
                {...check('replicas')}
              />
              <FieldError id={f('replicas-error')} text={errors.replicas} />
            </div>
          )}
        </div>
        {op === 'apply' && (
          <div class="field">
            <label for={f('manifest')}>Manifest</label>
            <textarea
              id={f('manifest')}
              rows={10}
              value={draft.manifest}
              onInput={set('manifest')}
              spellcheck={false}
              {...check('manifest', f('manifest-hint'))}
            />
            <FieldError id={f('manifest-error')} text={errors.manifest} />
            <p class="hint" id={f('manifest-hint')}>
              YAML (several documents separated by ---) or JSON.
            </p>
          </div>
        )}
        <div class="actions">
          <button type="submit" class="primary" disabled={outcome.kind === 'submitting'}>
            Submit
          </button>
        </div>
      </form>
      <OutcomeText outcome={outcome} />
    </>
  );
}

/** A field's validation message; rendered only when there is one (the field's aria-describedby names it). */
function FieldError({ id, text }: { id: string; text: string | undefined }) {
  if (!text) return null;
  return (
    <p class="field-error" id={id}>
      {text}
    </p>
  );
}

/**
 * The status element showing an operation's outcome: state, id, summary, "waiting for the result…" while followed,
 * or the error. `label` is its accessible name (default "Operation result").
 */
export function OutcomeText({ outcome, label = 'Operation result' }: { outcome: Outcome; label?: string }) {
  let content: ComponentChildren = null;
  let tone = '';
  if (outcome.kind === 'submitting') {
    content = 'Submitting…';
  } else if (outcome.kind === 'record') {
    const { record, following } = outcome;
    const state = operationStateName(record.state);
    const summary = summarizeOperation(record);
    tone = following ? 'busy' : record.result?.success ? 'good' : state === 'SUCCEEDED' ? 'good' : 'bad';
    content = (
      <>
        <strong>{state}</strong> · operation{' '}
        <a class="mono" href={operationHref(record.id)}>
          {record.id}
        </a>
        {summary && <> · {summary}</>}
        {following && <> · waiting for the result…</>}
      </>
    );
  } else if (outcome.kind === 'error') {
    tone = 'bad';
    const record = outcome.record;
    content = (
      <>
        {record && (
          <>
            <strong>{operationStateName(record.state)}</strong> · operation <span class="mono">{record.id}</span> ·{' '}
          </>
        )}
        {outcome.text}
      </>
    );
  }
  return (
    <p role="status" aria-label={label} class={`outcome ${tone ? `tone-${tone}` : ''}`}>
      {content}
    </p>
  );
}

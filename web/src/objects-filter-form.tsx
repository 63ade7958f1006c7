import { useEffect, useId, useState } from 'preact/hooks';
import type { Account } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { resolveKind } from '../../src/shared/kind-names.js';
import type { ObjectFilter } from './object-filter.js';
import { hrefFor, navigate } from './router.js';

/**
 * The Objects filter form. Submitting writes the filter into the hash (so it is bookmarkable and Back works); the
 * page reacts to the hash, not to this form. Fields follow the hash when it changes from elsewhere.
 * Kind suggestions come from the accounts' cached kinds (of the chosen account when one is chosen). The kind is
 * read like kubectl reads it (`pod`, `po`, `pods`, `deploy` → Pod, Deployment; an unknown CamelCase name is taken
 * as a custom resource's Kind) and goes into the URL as the Kind; an unknown name is refused at the field.
 */
export function ObjectsFilterForm({ filter, accounts }: { filter: ObjectFilter; accounts: Account[] | undefined }) {
  const [draft, setDraft] = useState(filter);
  const [kindError, setKindError] = useState('');
  const id = useId();
  const f = (name: string): string => `${id}-${name}`;
  useEffect(() => {
    setDraft(filter);
    setKindError('');
  }, [filter.account, filter.kind, filter.namespace, filter.labels]);

  const set = (field: keyof ObjectFilter) => (event: { currentTarget: HTMLInputElement | HTMLSelectElement }) => {
    const value = event.currentTarget.value;
    setDraft((d) => ({ ...d, [field]: value }));
    if (field === 'kind') setKindError('');
  };
  const submit = (event: Event): void => {
    event.preventDefault();
    let kind = draft.kind.trim();
    if (kind !== '') {
      try {
        kind = resolveKind(kind).kind;
      } catch {
        setKindError(`Unknown kind “${kind}”: try a Kind, its plural or short name (Pod, pods, po).`);
        document.getElementById(f('kind'))?.focus();
        return;
      }
    }
    setKindError('');
    setDraft((d) => ({ ...d, kind }));
    navigate(
      hrefFor('objects', {
        account: draft.account,
        kind,
        namespace: draft.namespace.trim(),
        labels: draft.labels.trim(),
      }),
    );
  };

  const names = (accounts ?? []).map((a) => a.name);
  if (draft.account && !names.includes(draft.account)) names.push(draft.account);
  const kinds = new Set<string>();
  for (const a of accounts ?? []) {
    if (draft.account && a.name !== draft.account) continue;
    for (const k of a.kinds) kinds.add(k.kind);
  }

  return (
    <form aria-label="Filter objects" class="filter" onSubmit={submit}>
      <div class="field">
        <label for={f('account')}>Account</label>
        <select id={f('account')} value={draft.account} onChange={set('account')}>
          <option value="">All accounts</option>
          {names.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for={f('kind')}>Kind</label>
        <input
          id={f('kind')}
          value={draft.kind}
          onInput={set('kind')}
          list={f('kinds')}
          placeholder="any"
          autoComplete="off"
          spellcheck={false}
          aria-invalid={kindError ? 'true' : undefined}
          aria-describedby={kindError ? f('kind-error') : undefined}
        />
        {kindError && (
          <p class="field-error" id={f('kind-error')}>
            {kindError}
          </p>
        )}
        <datalist id={f('kinds')}>
          {[...kinds].sort().map((k) => (
            <option key={k} value={k} />
          ))}
        </datalist>
      </div>
      <div class="field">
        <label for={f('namespace')}>Namespace</label>
        <input
          id={f('namespace')}
          value={draft.namespace}
          onInput={set('namespace')}
          placeholder="any"
          autoComplete="off"
          spellcheck={false}
        />
      </div>
      <div class="field wide">
        <label for={f('labels')}>Label selector</label>
        <input
          id={f('labels')}
          value={draft.labels}
          onInput={set('labels')}
          placeholder="app=web,tier in (a,b)"
          autoComplete="off"
          spellcheck={false}
        />
      </div>
      <div class="actions">
        <button type="submit" class="primary">
          Show objects
        </button>
        <a class="button" href={hrefFor('objects')}>
          Clear
        </a>
      </div>
    </form>
  );
}

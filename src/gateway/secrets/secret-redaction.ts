/**
 * Finds Secret values inside an operation's text fields and shows them redacted. An apply's manifests (YAML or JSON,
 * one or many documents, arrays and `kind: List` items) and a patch of a Secret can carry them: a Secret's `data` and
 * `stringData` values, the kubectl last-applied annotation (which embeds the whole manifest), and any other string of
 * the Secret that holds one of its values. Keys stay (unless one holds a value), so a reader still sees what an
 * operation changed; values become {@link REDACTED}. Text that cannot be parsed but mentions a Secret is redacted
 * whole: when in doubt, hide.
 */
import { isMap, isNode, isScalar, parseAllDocuments, parseDocument, Scalar, visit, type Document, type Pair, type YAMLMap } from 'yaml';
import { isSecretKind } from '../../shared/secret-kind.js';
import { copiedValueMatcher, LAST_APPLIED_ANNOTATION } from '../../shared/secret-scrub.js';
import { REDACTED, type SecretValueMatcher } from '../../shared/secret-values.js';

/** What a reader sees instead of a secret value (the one spelling, src/shared/secret-values.ts). */
export { REDACTED };

/** A text field with its Secret values redacted; `secret` is false (and `text` unchanged) when it had none. */
export interface Redaction {
  text: string;
  secret: boolean;
}

/**
 * Text that cannot hold a Secret: no `secret` in any case (a kind the agent resolves is matched without case, and a
 * refused apply is stored all the same), and no escape that could spell it (YAML double-quoted and JSON strings can
 * write letters as `\x53`, `\u0053`, `\U00000053`). Such manifests are not parsed here at all: the submit path of
 * most ConfigMaps and Deployments stays free of a YAML parse.
 */
const MAY_HOLD_SECRET = /secret|\\[xuU]/i;

/** Redacts the Secret values of an apply's manifests. */
export function redactManifests(manifests: string): Redaction {
  if (!MAY_HOLD_SECRET.test(manifests)) return { text: manifests, secret: false };
  let docs: Document.Parsed[];
  try {
    docs = parseAllDocuments(manifests, { uniqueKeys: false }) as Document.Parsed[];
  } catch {
    return wholeIfMentioned(manifests);
  }
  if (!Array.isArray(docs) || docs.some((d) => d.errors.length > 0)) return wholeIfMentioned(manifests);
  let secret = false;
  for (const doc of docs) {
    visit(doc, {
      Map(_, node) {
        if (isSecret(node)) secret = redactSecretNode(node) || secret;
      },
    });
  }
  return secret ? { text: docs.map(String).join(''), secret } : { text: manifests, secret: false };
}

/**
 * Redacts a patch of an object of `kind`: for a Secret (the kind in any spelling the agent resolves: `secret`,
 * `secrets`, `v1/Secret`…), every value a JSON patch sets and the `data`/`stringData` values (and last-applied
 * annotation) of a merge or strategic patch. Patches of other kinds carry no Secret values.
 */
export function redactPatch(kind: string, patch: string): Redaction {
  if (!isSecretKind(kind)) return { text: patch, secret: false };
  let doc: Document.Parsed;
  try {
    doc = parseDocument(patch, { uniqueKeys: false }) as Document.Parsed;
  } catch {
    return { text: REDACTED, secret: true };
  }
  if (doc.errors.length > 0) return { text: REDACTED, secret: true };
  const root = doc.contents;
  if (isMap(root)) redactSecretNode(root as YAMLMap);
  else {
    visit(doc, {
      Map(_, node) {
        if (node.has('value')) node.set('value', quoted(REDACTED));
      },
    });
  }
  return { text: String(doc), secret: true };
}

/** A mapping whose `kind` names a Secret in any spelling (src/shared/secret-kind.ts). */
function isSecret(node: YAMLMap): boolean {
  const kind = node.get('kind');
  const text = isScalar(kind) ? kind.value : kind;
  return typeof text === 'string' && isSecretKind(text);
}

/**
 * Redacts one Secret mapping in place; true when it held a value to hide. Besides `data`, `stringData` and the
 * last-applied annotation, any other string of the Secret that holds one of its values (an annotation the manifest
 * copies a value into; the rule of src/shared/secret-scrub.ts) is a value too.
 */
function redactSecretNode(node: YAMLMap): boolean {
  const plain = node.toJSON() as unknown;
  const matcher = plain !== null && typeof plain === 'object' ? copiedValueMatcher(plain as Record<string, unknown>) : undefined;
  let found = false;
  for (const field of ['data', 'stringData']) {
    const value = node.get(field, true);
    if (value === undefined || value === null) continue;
    found = true;
    if (isMap(value)) for (const item of value.items) item.value = quoted(REDACTED);
    else node.set(field, quoted(REDACTED));
  }
  const annotations = node.getIn(['metadata', 'annotations'], true);
  if (isMap(annotations) && annotations.has(LAST_APPLIED_ANNOTATION)) {
    annotations.set(LAST_APPLIED_ANNOTATION, quoted(REDACTED));
    found = true;
  }
  if (matcher && !matcher.empty && redactCopies(node, matcher)) found = true;
  return found;
}

/** Fields of a Secret mapping that never hold a copied value (the values themselves are redacted already). */
const NOT_COPIES = new Set(['apiVersion', 'kind', 'data', 'stringData']);
const IDENTITY = new Set(['name', 'namespace']);

/** Redacts every scalar of a Secret mapping, outside {@link NOT_COPIES} and its name, that holds one of its values. */
function redactCopies(node: YAMLMap, matcher: SecretValueMatcher): boolean {
  let found = false;
  const holds = (scalar: unknown, isKey: boolean) =>
    isScalar(scalar) && typeof scalar.value === 'string' && (isKey ? matcher.contains(scalar.value) : matcher.holds(scalar.value));
  const redactIn = (pair: Pair<unknown, unknown>) => {
    if (holds(pair.key, true)) {
      pair.key = quoted(REDACTED);
      found = true;
    }
    if (holds(pair.value, false)) {
      pair.value = quoted(REDACTED);
      found = true;
    } else if (isNode(pair.value)) {
      visit(pair.value, {
        Scalar(key, scalar) {
          if (!holds(scalar, key === 'key')) return undefined;
          found = true;
          return quoted(REDACTED);
        },
      });
    }
  };
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? pair.key.value : pair.key;
    if (typeof key === 'string' && NOT_COPIES.has(key)) continue;
    if (key === 'metadata' && isMap(pair.value)) {
      for (const field of pair.value.items) {
        const name = isScalar(field.key) ? field.key.value : field.key;
        if (!(typeof name === 'string' && IDENTITY.has(name))) redactIn(field as Pair<unknown, unknown>);
      }
    } else redactIn(pair as Pair<unknown, unknown>);
  }
  return found;
}

function quoted(value: string): Scalar {
  const scalar = new Scalar(value);
  scalar.type = Scalar.QUOTE_DOUBLE;
  return scalar;
}

function wholeIfMentioned(text: string): Redaction {
  return MAY_HOLD_SECRET.test(text)
    ? { text: `${REDACTED} (manifests that mention a Secret and do not parse)`, secret: true }
    : { text, secret: false };
}

/**
 * Finds Secret values inside an operation's text fields and shows them redacted. An apply's manifests (YAML or JSON,
 * one or many documents, arrays and `kind: List` items) and a patch of a Secret can carry them: a Secret's `data` and
 * `stringData` values, the kubectl last-applied annotation (which embeds the whole manifest), and any other string of
 * the Secret that holds one of its values. Keys stay (unless one holds a value), so a reader still sees what an
 * operation changed; values become {@link REDACTED}. Text that cannot be parsed but mentions a Secret is redacted
 * whole: when in doubt, hide. So is a document holding a Secret and a YAML alias: an alias can carry a value into the
 * Secret from an anchor outside it (a field of a `List`, a label), where the redaction of the Secret would not see it.
 */
import { isMap, isScalar, parseAllDocuments, parseDocument, Scalar, visit, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
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
 * write letters as `\x53`, `\u0053`, `\U00000053`, and a YAML double-quoted string joins the lines around an escaped
 * line break: `"Sec\` at the end of a line and `ret"` on the next is `Secret`). Such manifests are not parsed here at
 * all: the submit path of most ConfigMaps and Deployments stays free of a YAML parse.
 */
const MAY_HOLD_SECRET = /secret|\\[xuU\r\n]/i;

/** The manifests as a reader sees them when they mention a Secret and cannot be redacted value by value. */
const wholly = (why: string): Redaction => ({ text: `${REDACTED} (manifests that ${why})`, secret: true });

/** Redacts the Secret values of an apply's manifests. */
export function redactManifests(manifests: string): Redaction {
  if (!MAY_HOLD_SECRET.test(manifests)) return { text: manifests, secret: false };
  const docs = parsed(() => parseAllDocuments(manifests, { uniqueKeys: false }) as Document.Parsed[]);
  if (docs === undefined) return wholly('mention a Secret and do not parse');
  const secrets = docs.map((doc) => {
    const found: YAMLMap[] = [];
    visit(doc, {
      Map(_, node) {
        if (isSecret(node)) found.push(node);
      },
    });
    return found;
  });
  if (docs.some((doc, i) => secrets[i]!.length > 0 && hasAlias(doc))) return wholly('hold a Secret and YAML aliases');
  let secret = false;
  try {
    for (const node of secrets.flat()) secret = redactSecretNode(node) || secret;
  } catch {
    // A Secret whose plain form YAML cannot build (a YAML 1.1 merge of a scalar): the agent refuses it too.
    return wholly('hold a Secret YAML cannot build');
  }
  return secret ? { text: docs.map(String).join(''), secret } : { text: manifests, secret: false };
}

/** The parsed document(s), or undefined when any of them has errors (or the parser gave up). */
function parsed<T extends Document.Parsed | Document.Parsed[]>(parse: () => T): T | undefined {
  try {
    const docs = parse();
    if (![docs].flat().some((d) => d.errors.length > 0)) return docs;
  } catch {
    // a text the parser gives up on does not parse
  }
  return undefined;
}

/**
 * Redacts a patch of an object of `kind`: for a Secret (the kind in any spelling the agent resolves: `secret`,
 * `secrets`, `v1/Secret`…), every value a JSON patch sets and the `data`/`stringData` values (and last-applied
 * annotation) of a merge or strategic patch. Patches of other kinds carry no Secret values.
 */
export function redactPatch(kind: string, patch: string): Redaction {
  if (!isSecretKind(kind)) return { text: patch, secret: false };
  const doc = parsed(() => parseDocument(patch, { uniqueKeys: false }) as Document.Parsed);
  if (doc === undefined || hasAlias(doc)) return { text: REDACTED, secret: true };
  const root = doc.contents;
  if (isMap(root)) {
    try {
      redactSecretNode(root);
    } catch {
      return { text: REDACTED, secret: true }; // a mapping YAML cannot build (a YAML 1.1 merge of a scalar)
    }
  } else {
    visit(doc, {
      Map(_, node) {
        if (node.has('value')) node.set('value', quoted(REDACTED));
      },
    });
  }
  return { text: String(doc), secret: true };
}

/** True when the document holds a YAML alias (`*name`). */
function hasAlias(doc: Document.Parsed): boolean {
  let aliased = false;
  visit(doc, {
    Alias() {
      aliased = true;
    },
  });
  return aliased;
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
  const matcher = copiedValueMatcher(node.toJSON() as Record<string, unknown>);
  let found = false;
  for (const field of ['data', 'stringData']) {
    const value = node.get(field, true); // an empty field too (a null scalar): it is there
    if (value === undefined) continue;
    found = true;
    if (isMap(value)) for (const item of value.items) item.value = quoted(REDACTED);
    else node.set(field, quoted(REDACTED));
  }
  const annotations = node.getIn(['metadata', 'annotations']);
  if (isMap(annotations) && annotations.has(LAST_APPLIED_ANNOTATION)) {
    annotations.set(LAST_APPLIED_ANNOTATION, quoted(REDACTED));
    found = true;
  }
  redactCopies(node, matcher);
  // Values come only from data and stringData, which are literally in the mapping (no alias reaches here): with any
  // value, either a field above was found or (a YAML 1.1 merge key brought them in) the copies hold them.
  return found || !matcher.empty;
}

/**
 * Fields of a Secret mapping whose values are never copies: they say what the object is (a Secret value `v1` or
 * `Secret` is no reason to hide them).
 */
const NOT_COPIES = new Set<unknown>(['apiVersion', 'kind']);
const IDENTITY = new Set<unknown>(['name', 'namespace']);

/**
 * Redacts every scalar of a Secret mapping, outside {@link NOT_COPIES} and its name and namespace, that holds one of
 * its values: the keys of `data` and `stringData` too.
 */
function redactCopies(node: YAMLMap, matcher: SecretValueMatcher): void {
  const holds = (scalar: unknown, isKey: boolean) =>
    isScalar(scalar) && typeof scalar.value === 'string' && (isKey ? matcher.contains(scalar.value) : matcher.holds(scalar.value));
  const redactIn = (pair: Pair<unknown, unknown>) => {
    if (holds(pair.key, true)) pair.key = quoted(REDACTED);
    if (holds(pair.value, false)) pair.value = quoted(REDACTED);
    else {
      // A key without a value has null there, which visit passes over.
      visit(pair.value as Node, {
        Scalar(key, scalar) {
          return holds(scalar, key === 'key') ? quoted(REDACTED) : undefined;
        },
      });
    }
  };
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? pair.key.value : pair.key;
    if (NOT_COPIES.has(key)) continue;
    if (key === 'metadata' && isMap(pair.value)) {
      for (const field of pair.value.items) {
        const name = isScalar(field.key) ? field.key.value : field.key;
        if (!IDENTITY.has(name)) redactIn(field as Pair<unknown, unknown>);
      }
    } else redactIn(pair as Pair<unknown, unknown>);
  }
}

function quoted(value: string): Scalar {
  const scalar = new Scalar(value);
  scalar.type = Scalar.QUOTE_DOUBLE;
  return scalar;
}

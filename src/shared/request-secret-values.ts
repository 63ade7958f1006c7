/**
 * The Secret values an operation request carries — the ones the gateway stores sealed and shows redacted: the
 * `data`/`stringData` values of the Secrets in an apply's manifests (and of their last-applied annotation), and the
 * values a patch of a Secret sets. A cluster may echo them in its refusal (a bad name, a bad label, a policy's
 * denial), so the agent and the gateway redact them from a failed operation's message (./secret-values.ts): the
 * message is stored and shown in plaintext, where the request is not.
 */
import { parseAllDocuments } from 'yaml';
import { parsePatchText } from './patch-text.js';
import { isSecretKind } from './secret-kind.js';
import { LAST_APPLIED_ANNOTATION } from './secret-scrub.js';
import { secretValuesOf } from './secret-values.js';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The values of a Secret object and of the manifest its last-applied annotation repeats. */
function valuesOfSecret(secret: Record<string, unknown>, out: Set<string>): void {
  for (const value of secretValuesOf(secret)) out.add(value);
  const annotations = isRecord(secret.metadata) ? secret.metadata.annotations : undefined;
  const lastApplied = isRecord(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  if (typeof lastApplied !== 'string') return;
  try {
    const applied = JSON.parse(lastApplied) as unknown;
    if (isRecord(applied)) for (const value of secretValuesOf(applied)) out.add(value);
  } catch {
    if (lastApplied.trim() !== '') out.add(lastApplied);
  }
}

/** Every Secret inside `value` (documents, arrays, `List` items, anything nested), its values added to `out`. */
function collect(value: unknown, out: Set<string>, depth = 0): void {
  if (depth > 64) return;
  if (Array.isArray(value)) {
    for (const item of value) collect(item, out, depth + 1);
    return;
  }
  if (!isRecord(value)) return;
  if (typeof value.kind === 'string' && isSecretKind(value.kind)) valuesOfSecret(value, out);
  for (const item of Object.values(value)) collect(item, out, depth + 1);
}

/** The Secret values in an apply's manifests (JSON or YAML, as the agent reads them); none when they do not parse. */
export function manifestSecretValues(manifests: string): string[] {
  // No Secret without the word (or an escape that could spell it, an escaped line break joining two halves): no parse.
  if (!/secret|\\[xuU\r\n]/i.test(manifests)) return [];
  const out = new Set<string>();
  try {
    collect(JSON.parse(manifests), out);
    return [...out];
  } catch {
    // YAML
  }
  for (const doc of parseAllDocuments(manifests)) {
    if (doc.errors.length > 0) continue;
    try {
      collect(doc.toJS({ maxAliasCount: 100 }), out);
    } catch {
      // an alias bomb: the agent refuses it too
    }
  }
  return [...out];
}

/** Every string in `value`, keyed by where it is (for {@link secretValuesOf}'s maps). */
function strings(value: unknown, out: Record<string, string>, where = ''): Record<string, string> {
  if (typeof value === 'string') out[where] = value;
  else if (Array.isArray(value)) value.forEach((item, i) => strings(item, out, `${where}/${i}`));
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) strings(v, out, `${where}/${k}`);
  return out;
}

/**
 * The Secret values in a patch of `kind` (none unless `kind` names a Secret): every string a JSON patch sets (decoded
 * too where it sets `/data`), and the `data`/`stringData` values of a merge or strategic patch.
 */
export function patchSecretValues(kind: string, patch: string): string[] {
  if (!isSecretKind(kind)) return [];
  let document: unknown;
  try {
    document = parsePatchText(patch);
  } catch {
    return [];
  }
  const out = new Set<string>();
  if (Array.isArray(document)) {
    for (const op of document) {
      if (!isRecord(op) || !('value' in op)) continue;
      const set = strings(op.value, {});
      const intoData = typeof op.path === 'string' && /^\/data(\/|$)/i.test(op.path);
      for (const value of secretValuesOf(intoData ? { data: set } : { stringData: set })) out.add(value);
      collect(op.value, out);
      if (isRecord(op.value)) valuesOfSecret(op.value, out);
    }
  } else if (isRecord(document)) {
    valuesOfSecret(document, out);
  }
  return [...out];
}

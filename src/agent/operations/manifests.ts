/**
 * Parses the manifests of an apply: YAML (multi-document, `---`) or JSON (an object, an array of objects, or a
 * `List`), flattened into objects, each checked to be a Kubernetes object (apiVersion, kind, metadata.name — or only
 * metadata.generateName, for an object to be created under a generated name). Every
 * problem is an `InvalidManifest` (HTTP 400) naming the document, found before anything is applied.
 */
import { parseAllDocuments } from 'yaml';
import { PatchTextError, parsePatchText } from '../../shared/patch-text.js';
import { badRequest, OutpostReason } from './operation-error.js';

/** One object to apply, with where it came from (for messages). */
export interface ManifestObject {
  /** "document 2" or "document 1, item 3". */
  where: string;
  object: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const invalid = (message: string) => badRequest(message, OutpostReason.InvalidManifest);

function isList(v: Record<string, unknown>): boolean {
  return typeof v.kind === 'string' && (v.kind === 'List' || v.kind.endsWith('List')) && Array.isArray(v.items);
}

function check(where: string, value: unknown): Record<string, unknown> {
  if (!isObject(value))
    throw invalid(`${where}: expected a Kubernetes object (a mapping), got ${Array.isArray(value) ? 'a list' : typeof value}`);
  if (typeof value.apiVersion !== 'string' || value.apiVersion.trim() === '')
    throw invalid(`${where}: not a Kubernetes object: apiVersion is missing`);
  if (typeof value.kind !== 'string' || value.kind.trim() === '') throw invalid(`${where}: not a Kubernetes object: kind is missing`);
  if (!isObject(value.metadata)) throw invalid(`${where}: not a Kubernetes object: metadata is missing`);
  const generated =
    value.metadata.name === undefined && typeof value.metadata.generateName === 'string' && value.metadata.generateName !== '';
  if (!generated && (typeof value.metadata.name !== 'string' || value.metadata.name === ''))
    throw invalid(`${where}: ${value.kind}: metadata.name is missing`);
  if (value.metadata.namespace !== undefined && typeof value.metadata.namespace !== 'string')
    throw invalid(`${where}: metadata.namespace must be a string`);
  return value;
}

function flatten(where: string, value: unknown, out: ManifestObject[]): void {
  if (value === null || value === undefined) return; // an empty document
  if (Array.isArray(value)) {
    value.forEach((item, i) => flatten(`${where}, item ${i + 1}`, item, out));
    return;
  }
  if (isObject(value) && isList(value)) {
    (value.items as unknown[]).forEach((item, i) => flatten(`${where}, item ${i + 1}`, item, out));
    return;
  }
  out.push({ where, object: check(where, value) });
}

/** See the module comment. Throws an {@link OperationError} (400 InvalidManifest). */
export function parseManifests(text: string): ManifestObject[] {
  if (text.trim() === '') throw invalid('empty manifest: nothing to apply');
  const out: ManifestObject[] = [];
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    let value: unknown;
    let parsed = false;
    try {
      value = JSON.parse(text);
      parsed = true;
    } catch {
      // not JSON after all: YAML flow syntax is a superset, let the YAML parser report
    }
    if (parsed) {
      flatten('document 1', value, out);
      if (out.length === 0) throw invalid('empty manifest: no Kubernetes object in it');
      return out;
    }
  }
  const docs = parseAllDocuments(text, { prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, i) => {
    const where = `document ${i + 1}`;
    if (doc.errors.length > 0) throw invalid(`${where}: cannot parse YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      throw invalid(`${where}: cannot parse YAML: ${(err as Error).message}`);
    }
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      throw invalid(`${where}: not a Kubernetes object: expected a mapping with apiVersion, kind and metadata, got a ${typeof value}`);
    }
    flatten(where, value, out);
  });
  if (out.length === 0) throw invalid('empty manifest: no Kubernetes object in it');
  return out;
}

/** Parses a patch document (JSON, or YAML for convenience; src/shared/patch-text.ts). Throws a 400 BadRequest. */
export function parsePatchDocument(text: string): unknown {
  try {
    return parsePatchText(text);
  } catch (err) {
    if (err instanceof PatchTextError) throw badRequest(err.message);
    throw err;
  }
}

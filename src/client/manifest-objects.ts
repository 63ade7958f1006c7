/**
 * The objects a manifest names (`delete -f FILE`): kind, apiVersion, namespace and name of every document, `List`
 * items included. Checked before anything is sent: a document without a kind or a name is an error naming it.
 */
import { parseAllDocuments } from 'yaml';
import { checkManifestSyntax } from './manifest-syntax.js';

/** One object named by a manifest. `namespace` is '' when the document has none (the caller picks the default). */
export interface ManifestObject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Every object of `text` (from `source`, named in errors), in document order; empty documents are skipped. Throws
 * ManifestSyntaxError for malformed YAML (file, line, column) and Error for a document that names no object.
 */
export function objectsOfManifest(text: string, source: string): ManifestObject[] {
  checkManifestSyntax(text, source);
  const out: ManifestObject[] = [];
  parseAllDocuments(text).forEach((doc, index) => {
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const where = `${source}: document ${index + 1}`;
    if (!isObject(value)) throw new Error(`${where}: expected an object with apiVersion, kind and metadata`);
    const items = typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items) ? value.items : [value];
    items.forEach((item, i) => {
      const at = items.length > 1 || item !== value ? `${where}, item ${i + 1}` : where;
      out.push(objectOf(item, at));
    });
  });
  return out;
}

function objectOf(value: unknown, where: string): ManifestObject {
  if (!isObject(value)) throw new Error(`${where}: expected an object with apiVersion, kind and metadata`);
  const metadata = isObject(value.metadata) ? value.metadata : {};
  const kind = typeof value.kind === 'string' ? value.kind : '';
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  if (!kind) throw new Error(`${where}: object has no kind`);
  if (!name) throw new Error(`${where}: ${kind} has no metadata.name`);
  return {
    apiVersion: typeof value.apiVersion === 'string' ? value.apiVersion : '',
    kind,
    namespace: typeof metadata.namespace === 'string' ? metadata.namespace : '',
    name,
  };
}

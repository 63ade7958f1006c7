/**
 * A kubeconfig as a `yaml` Document, so a merge keeps everything it does not replace — other clusters, users and
 * contexts, unknown fields, key order, comments — and writes it back in the file's own sequence indentation.
 */
import { type Document, isMap, isScalar, isSeq, parseDocument, type YAMLMap, type YAMLSeq } from 'yaml';
import { CliError, ExitCode } from './errors.js';

/** The three named lists of a kubeconfig. */
export type KubeconfigSection = 'clusters' | 'users' | 'contexts';

/** One named entry: `{name, cluster}`, `{name, user}` or `{name, context}`. */
export type NamedEntry = { name: string } & Record<string, unknown>;

const SECTIONS: KubeconfigSection[] = ['clusters', 'users', 'contexts'];

function invalid(path: string, what: string): CliError {
  return new CliError(`the kubeconfig ${path} is not valid: ${what}; fix or move it (it was left unchanged)`, ExitCode.USAGE);
}

/** A new, empty kubeconfig (`apiVersion: v1`, `kind: Config`, empty lists). */
export function emptyKubeconfig(): Document {
  return parseDocument('apiVersion: v1\nkind: Config\npreferences: {}\nclusters: []\nusers: []\ncontexts: []\n');
}

/**
 * Parses an existing kubeconfig (blank text gives {@link emptyKubeconfig}). Throws CliError (exit 2) naming `path`
 * and the problem when it is not YAML, not a mapping, has another apiVersion/kind, or a list that is not a list of
 * entries with a string `name`.
 */
export function parseKubeconfig(text: string, path: string): Document {
  if (text.trim() === '') return emptyKubeconfig();
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    const line = first.linePos?.[0] ? ` at line ${first.linePos[0].line}` : '';
    throw invalid(path, `YAML error${line}: ${first.message.split('\n')[0]}`);
  }
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) return emptyKubeconfig();
  if (!isMap(doc.contents)) throw invalid(path, 'the top level is not a mapping');
  const apiVersion = doc.get('apiVersion');
  if (apiVersion !== undefined && apiVersion !== null && apiVersion !== 'v1') {
    throw invalid(path, `apiVersion is ${JSON.stringify(apiVersion)}, expected v1`);
  }
  const kind = doc.get('kind');
  if (kind !== undefined && kind !== null && kind !== 'Config') throw invalid(path, `kind is ${JSON.stringify(kind)}, expected Config`);
  for (const section of SECTIONS) {
    const node = doc.get(section, true);
    if (node === undefined || node === null || (isScalar(node) && node.value === null)) continue;
    if (!isSeq(node)) throw invalid(path, `${section} is not a list`);
    node.items.forEach((item, i) => {
      if (!isMap(item)) throw invalid(path, `${section}[${i}] is not a mapping`);
      if (typeof item.get('name') !== 'string') throw invalid(path, `${section}[${i}] has no string name`);
    });
  }
  const current = doc.get('current-context');
  if (current !== undefined && current !== null && typeof current !== 'string') throw invalid(path, 'current-context is not a string');
  return doc;
}

/**
 * Puts `entry` into `section`: in place of the first entry of the same name (keeping its comments; later duplicates
 * are removed), else at the end. Returns whether it replaced one.
 */
export function upsertEntry(doc: Document, section: KubeconfigSection, entry: NamedEntry): 'added' | 'replaced' {
  let seq = doc.get(section, true) as YAMLSeq | undefined;
  if (!isSeq(seq)) {
    seq = doc.createNode([]) as YAMLSeq;
    doc.set(section, seq);
  }
  // `clusters: []` (a new file, or kubectl's own empty lists) would print its entries in flow style
  seq.flow = false;
  const node = doc.createNode(entry) as YAMLMap;
  const matches = seq.items.flatMap((item, i) => (isMap(item) && item.get('name') === entry.name ? [i] : []));
  if (matches.length === 0) {
    seq.items.push(node);
    return 'added';
  }
  const [first, ...rest] = matches;
  const old = seq.items[first!] as YAMLMap;
  node.commentBefore = old.commentBefore;
  node.comment = old.comment;
  node.spaceBefore = old.spaceBefore;
  seq.items[first!] = node;
  for (const i of rest.reverse()) seq.items.splice(i, 1);
  return 'replaced';
}

/** Sets `current-context`. */
export function setCurrentContext(doc: Document, name: string): void {
  doc.set('current-context', name);
}

/**
 * The document as text. Sequences are indented the way `original` indents them (kubectl writes `- ` flush with the
 * parent key; the default for a new file), long lines are never folded.
 */
export function renderKubeconfig(doc: Document, original = ''): string {
  const indentSeq = /^[ \t]*[^\s#-][^\n]*:[ \t]*\n[ \t]+- /m.test(original) && !/^([ \t]*)[^\s#-][^\n]*:[ \t]*\n\1- /m.test(original);
  return doc.toString({ lineWidth: 0, indentSeq });
}

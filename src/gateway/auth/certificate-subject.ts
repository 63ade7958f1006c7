/**
 * Client certificate subjects as parsed attributes, and the matchers of `tls.subjectFilters` and certificate rules
 * (`authorization.rules` with `kind: certificate`). Matching a joined `CN=…,O=…` string made a CN of
 * `agent-eu-9,O=agents` look like an `O=agents` attribute; here values are escaped as RFC 4514 says when the subject
 * is written as a string, and attribute matchers look at the parsed values only. See docs/mtls.md.
 */

/** Subject attributes as the TLS layer parsed them: attribute name (`CN`, `O`, …) → its values (in order). */
export type SubjectAttributes = Readonly<Record<string, readonly string[]>>;

/** What a filter or a certificate rule matches: a regex over the RFC 4514 string and/or anchored attribute regexes. */
export interface SubjectMatcherSpec {
  subject?: string;
  attributes?: Readonly<Record<string, string>>;
}

const SUBJECT_ORDER = ['CN', 'OU', 'O', 'L', 'ST', 'C'];

/** Normalises Node's `getPeerCertificate().subject` (`{CN: 'a', OU: ['x', 'y']}`) to {@link SubjectAttributes}. */
export function subjectAttributes(subject: Readonly<Record<string, string | readonly string[] | undefined>>): SubjectAttributes {
  const out: Record<string, readonly string[]> = {};
  for (const [k, v] of Object.entries(subject)) if (v !== undefined) out[k] = ([] as string[]).concat(v as string | string[]);
  return out;
}

/** Escapes an attribute value as RFC 4514 section 2.4 requires (`,+"\<>;`, a leading `#` or space, a trailing space). */
function escapeRdnValue(value: string): string {
  // One pass, so a value of one space is escaped once (`\ `), not as a leading and then again as a trailing space.
  return value.replace(/[,+"\\<>;]|^[#\s]|\s$/g, '\\$&').replace(/\0/g, '\\00');
}

/**
 * `{CN: ['a,b'], O: ['c']}` → `CN=a\,b,O=c`: CN first, then the usual RDN order, then anything else alphabetically,
 * every value escaped ({@link escapeRdnValue}) so a value can never look like another attribute.
 */
export function formatSubjectAttributes(attributes: SubjectAttributes): string {
  const keys = Object.keys(attributes).sort((a, b) => {
    const ia = SUBJECT_ORDER.indexOf(a);
    const ib = SUBJECT_ORDER.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
  });
  return keys.flatMap((k) => attributes[k]!.map((v) => `${k}=${escapeRdnValue(v)}`)).join(',');
}

/**
 * Compiles a matcher: the `subject` regex (unanchored, as written) over the escaped string AND every attribute regex
 * (anchored: `^(?:…)$`) against at least one value of that attribute; an attribute the certificate lacks fails.
 */
export function createSubjectMatcher(spec: SubjectMatcherSpec): (subject: string, attributes: SubjectAttributes) => boolean {
  // no subject regex: the empty one, which matches every subject
  const subject = new RegExp(spec.subject ?? '');
  const attributes = Object.entries(spec.attributes ?? {}).map(([name, source]) => [name, new RegExp(`^(?:${source})$`)] as const);
  return (value, attrs) => subject.test(value) && attributes.every(([name, re]) => (attrs[name] ?? []).some((v) => re.test(v)));
}

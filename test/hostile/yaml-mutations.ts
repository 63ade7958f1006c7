/**
 * Mutations of YAML documents (agent configuration files, apply manifests): line edits (deleted, repeated, re-indented
 * lines; a value replaced by a hostile scalar), YAML features a parser may choke on (alias bombs, merge keys, tags,
 * duplicate keys, flow collections left open), byte damage, and structural edits of the parsed document written back
 * as YAML.
 */
import { parse, stringify } from 'yaml';
import type { Rng } from '../../testkit/rng.js';
import { flipBits, truncate } from './byte-mutations.js';
import { hostileString } from './hostile-strings.js';
import { mutateStructure, type Json } from './json-mutations.js';

/** A mutated text and what was done. */
export interface MutatedText {
  text: string;
  how: string;
}

const SNIPPETS = [
  'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
  '<<: {clouddriver: {grpc: "evil:1"}}',
  'anchor: &x {grpc: a}\nmerged:\n  <<: *x',
  '!!binary aGVsbG8=',
  '!!js/function "function(){}"',
  '!!set {a, b}',
  '!!omap [a: 1]',
  'key: !!int not-a-number',
  'key: !custom-tag value',
  '? [complex, key]\n: value',
  '{unclosed: [1, 2',
  '"unterminated',
  '\t- tab indented',
  '%YAML 1.1\n---\nold: yes',
  '---\n...\n---',
  'clouddriver: null',
  'kubernetes: {accounts: [{name: dup}, {name: dup}]}',
  '__proto__: {polluted: true}',
  'constructor: {prototype: {polluted: true}}',
  '*undefined_alias',
  '&anchor',
  'x: 0x_zz',
  'date: 2001-02-30',
  'big: 1e99999',
];

/** A line-level or YAML-feature mutation of `text`. */
function mutateYamlText(rng: Rng, text: string): MutatedText {
  const lines = text.split('\n');
  const at = rng.int(0, Math.max(0, lines.length - 1));
  switch (rng.int(0, 8)) {
    case 0:
      lines.splice(at, 1);
      return { text: lines.join('\n'), how: `line ${at + 1} deleted` };
    case 1:
      lines.splice(at, 0, lines[at] ?? '');
      return { text: lines.join('\n'), how: `line ${at + 1} repeated` };
    case 2: {
      const shift = rng.pick(['', ' ', '   ', '\t', '      ']);
      lines[at] = shift + (lines[at] ?? '').trimStart();
      return { text: lines.join('\n'), how: `line ${at + 1} re-indented` };
    }
    case 3: {
      const line = lines[at] ?? '';
      const colon = line.indexOf(': ');
      const value = hostileString(rng);
      const scalar = rng.pick([
        JSON.stringify(value),
        value,
        `'${value.replace(/'/g, "''")}'`,
        rng.pick(['-1', '0', '99999999999999999999', '[]', '{}', '~', 'yes', '.inf', '1.5']),
      ]);
      lines[at] = colon >= 0 ? `${line.slice(0, colon + 2)}${scalar}` : `${line}${scalar}`;
      return { text: lines.join('\n'), how: `line ${at + 1} value = ${scalar.slice(0, 30)}` };
    }
    case 4: {
      const snippet = rng.pick(SNIPPETS);
      lines.splice(at, 0, snippet);
      return { text: lines.join('\n'), how: `inserted ${JSON.stringify(snippet.slice(0, 30))}` };
    }
    case 5: {
      const snippet = rng.pick(SNIPPETS);
      return { text: rng.chance(0.5) ? snippet : `${text}\n${snippet}`, how: `document ${JSON.stringify(snippet.slice(0, 30))}` };
    }
    case 6: {
      const m = truncate(rng, new TextEncoder().encode(text));
      return { text: new TextDecoder().decode(m.bytes), how: m.how };
    }
    case 7: {
      const m = flipBits(rng, new TextEncoder().encode(text));
      return { text: new TextDecoder().decode(m.bytes), how: m.how };
    }
    default:
      return { text: `${text}\n${lines[at] ?? ''}`, how: `line ${at + 1} repeated at the end (duplicate key)` };
  }
}

/** A structural mutation of the parsed document, written back as YAML. */
function mutateYamlStructure(rng: Rng, text: string): MutatedText {
  const value = parse(text) as Json;
  const { value: mutated, how } = mutateStructure(rng, value);
  return { text: stringify(mutated), how };
}

/** Either kind of mutation. */
export function mutateYaml(rng: Rng, text: string): MutatedText {
  return rng.chance(0.5) ? mutateYamlText(rng, text) : mutateYamlStructure(rng, text);
}

/**
 * A small Dockerfile reader for tests: enough of the syntax to check a multi-stage file (line continuations,
 * comments, `FROM image AS name`, `COPY [--from=stage] [--chown=…] src… dest` in shell and JSON form, ARG defaults
 * substituted into FROM). It does not evaluate RUN or parse heredocs; it throws on what it cannot read so a test never
 * passes by skipping an instruction.
 */

/** One instruction, continuation lines joined. */
interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** A COPY: where from (a stage name, or undefined for the build context), its sources and destination. */
interface Copy {
  from?: string;
  /** Every `--flag=value` given (`from`, `chown`, `chmod`, `link`…). */
  flags: Map<string, string>;
  sources: string[];
  dest: string;
  line: number;
}

/** A build stage: its base, name and instructions in order. */
export interface Stage {
  base: string;
  name?: string;
  instructions: Instruction[];
  copies: Copy[];
  /** The last WORKDIR of the stage (absolute), '/' when none. */
  workdir: string;
  /** The last USER of the stage, undefined when none (root). */
  user?: string;
}

/** A parsed Dockerfile. */
export interface Dockerfile {
  /** ARGs declared before the first FROM, with their defaults. */
  globalArgs: Map<string, string>;
  stages: Stage[];
}

/** Joins continuation lines and drops comments and blank lines. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending: { text: string; line: number } | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (pending === undefined && /^\s*(#|$)/.test(line)) return;
    if (pending !== undefined && /^\s*#/.test(line)) return; // comments inside a continuation are skipped
    const continues = /\\\s*$/.test(line);
    const body = continues ? line.replace(/\\\s*$/, '') : line;
    pending = pending === undefined ? { text: body, line: index + 1 } : { text: `${pending.text} ${body.trim()}`, line: pending.line };
    if (continues) return;
    const match = /^\s*([A-Za-z]+)\s*(.*)$/.exec(pending.text);
    if (!match) throw new Error(`Dockerfile line ${pending.line}: cannot read "${pending.text}"`);
    out.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: pending.line });
    pending = undefined;
  });
  if (pending !== undefined) throw new Error(`Dockerfile line ${pending.line}: continuation never ends`);
  return out;
}

function words(args: string): string[] {
  if (args.startsWith('[')) {
    const parsed: unknown = JSON.parse(args);
    if (!Array.isArray(parsed) || parsed.some((w) => typeof w !== 'string')) throw new Error(`not a JSON array of strings: ${args}`);
    return parsed as string[];
  }
  return args.split(/\s+/).filter(Boolean);
}

function parseCopy(instruction: Instruction): Copy {
  const flags = new Map<string, string>();
  let rest = instruction.args;
  for (let flag = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest); flag; flag = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest)) {
    flags.set(flag[1]!, flag[2] ?? '');
    rest = rest.slice(flag[0].length);
  }
  const parts = words(rest);
  if (parts.some((p) => p.startsWith('<<')))
    throw new Error(`Dockerfile line ${instruction.line}: heredoc COPY is not supported by this reader`);
  if (parts.length < 2) throw new Error(`Dockerfile line ${instruction.line}: COPY needs a source and a destination`);
  return { from: flags.get('from'), flags, sources: parts.slice(0, -1), dest: parts[parts.length - 1]!, line: instruction.line };
}

function substitute(value: string, args: Map<string, string>): string {
  return value.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (whole, name: string) => args.get(name) ?? whole);
}

/** Parses a Dockerfile's stages. Throws on an instruction before the first FROM other than ARG. */
export function parseDockerfile(text: string): Dockerfile {
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const instruction of instructions(text)) {
    if (instruction.keyword === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args);
      if (!match) throw new Error(`Dockerfile line ${instruction.line}: cannot read FROM ${instruction.args}`);
      stages.push({ base: substitute(match[1]!, globalArgs), name: match[2], instructions: [], copies: [], workdir: '/' });
      continue;
    }
    const stage = stages[stages.length - 1];
    if (!stage) {
      if (instruction.keyword !== 'ARG')
        throw new Error(`Dockerfile line ${instruction.line}: ${instruction.keyword} before the first FROM`);
      const [name, value] = instruction.args.split('=', 2);
      globalArgs.set(name!.trim(), (value ?? '').trim());
      continue;
    }
    stage.instructions.push(instruction);
    if (instruction.keyword === 'COPY' || instruction.keyword === 'ADD') stage.copies.push(parseCopy(instruction));
    if (instruction.keyword === 'WORKDIR')
      stage.workdir = instruction.args.startsWith('/') ? instruction.args : `${stage.workdir.replace(/\/$/, '')}/${instruction.args}`;
    if (instruction.keyword === 'USER') stage.user = instruction.args;
  }
  return { globalArgs, stages };
}

/** The JSON-form arguments of an instruction (ENTRYPOINT, CMD, HEALTHCHECK's CMD); throws for the shell form. */
export function execForm(args: string): string[] {
  if (!args.startsWith('[')) throw new Error(`expected the exec (JSON array) form, got: ${args}`);
  return words(args);
}

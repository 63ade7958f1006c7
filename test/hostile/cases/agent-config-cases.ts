/**
 * Mutated agent configuration files through the real loader (`loadAgentConfig`, as `outpost agent --config` runs
 * it): the documented example file edited line by line, with YAML features a parser may choke on, damaged bytes,
 * structural edits, and hostile environment overrides. The oracle: either a configuration comes back, or an
 * `AgentConfigError` listing issues, each naming its key (only a YAML syntax error, an unreadable file or a root that
 * is not a mapping may have an empty path) — never any other error, and never slowly.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentConfigError, loadAgentConfig } from '../../../src/agent/config/load.js';
import type { Rng } from '../../../testkit/rng.js';
import { accepted, failure, guarded, typed, type HostileCase } from '../hostile-case.js';
import { hostileString } from '../hostile-strings.js';
import { uniqueTag } from '../agent-messages.js';
import { mutateYaml } from '../yaml-mutations.js';

const EXAMPLE = readFileSync(new URL('../../../config/agent.example.yaml', import.meta.url), 'utf8');

/** Issues whose path may be empty: the problem is the file as a whole, or an unknown key (named) at the top level. */
const WHOLE_FILE = /^(YAML syntax|expected a YAML mapping|cannot read file|unknown keys? ")/;

/**
 * Most CPU time a load may take before it counts as a failure (a parser stuck on a bomb). CPU time of this process, not
 * wall-clock time: the load is synchronous, and other processes on a loaded machine do not count against it.
 */
const SLOW_MS = 2000;

/** CPU milliseconds this process has used so far (user and system). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

const ENV_KEYS = [
  'OUTPOST_AGENT_GRPC',
  'OUTPOST_AGENT_TOKEN',
  'OUTPOST_AGENT_TOKEN_FILE',
  'OUTPOST_AGENT_INSECURE',
  'OUTPOST_AGENT_ID',
  'OUTPOST_AGENT_ZONE',
  'OUTPOST_AGENT_ADMIN_PORT',
  'OUTPOST_AGENT_METRICS_PORT',
  'OUTPOST_AGENT_LOG_LEVEL',
];

function configCase(rng: Rng): HostileCase {
  const tag = uniqueTag(rng);
  const { text, how } = mutateYaml(rng, EXAMPLE);
  const env: Record<string, string> = {};
  if (rng.chance(0.2)) env[rng.pick(ENV_KEYS)] = hostileString(rng).replace(/\u0000/g, '');
  const name = `${how}${Object.keys(env).length > 0 ? ` with ${Object.keys(env)[0]}` : ''}`;
  return {
    category: 'agent config',
    name,
    run: (target) =>
      guarded(name, async () => {
        const file = join(target.scratchDir, `agent-${tag}.yaml`);
        writeFileSync(file, text);
        const started = cpuMs();
        try {
          loadAgentConfig(file, env);
          return accepted(name);
        } catch (err) {
          const took = cpuMs() - started;
          if (took > SLOW_MS) return failure(`${name}: took ${Math.round(took)} ms of CPU`);
          if (!(err instanceof AgentConfigError))
            return failure(`${name}: ${(err as Error)?.name}: ${(err as Error)?.message?.slice(0, 200)}`);
          if (err.issues.length === 0) return failure(`${name}: AgentConfigError without issues`);
          const unnamed = err.issues.find(
            (i) => typeof i.message !== 'string' || i.message === '' || (i.path === '' && !WHOLE_FILE.test(i.message)),
          );
          if (unnamed) return failure(`${name}: an issue names no key: ${JSON.stringify(unnamed)}`);
          return typed(`${name}: ${err.issues[0]!.path}: ${err.issues[0]!.message.slice(0, 80)}`, 'AgentConfigError');
        }
      }),
  };
}

/** Case factory of the agent config category. */
export const AGENT_CONFIG_CASES = { 'agent config': configCase };

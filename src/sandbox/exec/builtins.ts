/**
 * The fixed, harmless commands `kubectl exec` can run in a sandbox pod, and the "main process" `kubectl attach`
 * attaches to. Nothing here touches the host: output is derived from the command line, stdin and the pod object.
 * The list is documented in src/sandbox/README.md ("exec, attach and port-forward"); keep the two in step.
 */
import { isPlainObject, type KubeObject } from '../types.js';
import { echoStdin, type Program, sleep } from './program.js';

/** Longest `sleep` a command may ask for (seconds). */
const MAX_SLEEP_SECONDS = 3600;

function containerEnv(pod: KubeObject, container: string): string[] {
  const spec = isPlainObject(pod.spec) ? pod.spec : {};
  const c = (Array.isArray(spec.containers) ? spec.containers : []).filter(isPlainObject).find((x) => x.name === container);
  const env = (Array.isArray(c?.env) ? c.env : []).filter(isPlainObject);
  return env.filter((e) => typeof e.name === 'string' && typeof e.value === 'string').map((e) => `${String(e.name)}=${String(e.value)}`);
}

/** Splits a `sh -c` script into words (single and double quotes group; no expansion, no operators). */
function splitWords(script: string): string[] {
  const words: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(script); m; m = re.exec(script)) words.push(m[1] ?? m[2] ?? m[3]!);
  return words;
}

function exitCodeOf(arg: string | undefined): number {
  if (arg === undefined) return 0;
  const n = Number(arg);
  return Number.isInteger(n) ? ((n % 256) + 256) % 256 : 2;
}

/** The program for an exec `command` (argv) in `container` of `pod`. Unknown commands exit 127 like a shell. */
export function execProgram(command: string[], pod: KubeObject, container: string): Program {
  const [path = '', ...args] = command;
  const name = path.slice(path.lastIndexOf('/') + 1);
  switch (name) {
    case 'echo':
      return async (io) => {
        io.write('stdout', `${args.join(' ')}\n`);
        return 0;
      };
    case 'cat':
      return async (io) => {
        await echoStdin(io);
        return 0;
      };
    case 'hostname':
      return async (io) => {
        io.write('stdout', `${pod.metadata.name}\n`);
        return 0;
      };
    case 'env':
    case 'printenv':
      return async (io) => {
        const lines = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', `HOSTNAME=${pod.metadata.name}`, 'HOME=/root'];
        io.write('stdout', `${[...lines, ...containerEnv(pod, container)].join('\n')}\n`);
        return 0;
      };
    case 'pwd':
      return async (io) => {
        io.write('stdout', '/\n');
        return 0;
      };
    case 'true':
      return async () => 0;
    case 'false':
      return async () => 1;
    case 'exit':
      return async () => exitCodeOf(args[0]);
    case 'sleep':
      return async (io) => {
        const seconds = Math.min(Math.max(Number(args[0]) || 0, 0), MAX_SLEEP_SECONDS);
        await sleep(seconds * 1000, io.signal);
        return 0;
      };
    case 'sh':
    case 'bash':
      if (args[0] === '-c' && args[1] !== undefined) return execProgram(splitWords(args[1]), pod, container);
      return async (io) => {
        io.write('stderr', `${name}: the sandbox shell only runs "${name} -c <built-in command>"\n`);
        return 2;
      };
    default:
      return async (io) => {
        io.write('stderr', `sh: ${path}: command not found\n`);
        return 127;
      };
  }
}

/** What `kubectl attach` attaches to: a greeting line, then stdin echoed back until it closes (ends at once without stdin). */
export function attachProgram(pod: KubeObject, container: string): Program {
  return async (io) => {
    io.write('stdout', `attached to container ${container} of pod ${pod.metadata.namespace}/${pod.metadata.name}\n`);
    if (io.hasStdin) await echoStdin(io);
    return 0;
  };
}

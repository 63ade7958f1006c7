/**
 * Pod behaviour controls: the sandbox runs no containers, so tests tell the pretend kubelet what a pod's containers
 * "do" through annotations under `sandbox.outpost.dev/` (a pod made from a template inherits the template's
 * annotations, so they work on Deployment, StatefulSet, DaemonSet and Job templates too) or, more coarsely, through
 * an image name under `sandbox/`. Annotations win over the image; a pod that names no ready delay gets the sandbox's
 * `podReadyDelayMs`. The semantics are documented in README.md.
 */
import { isPlainObject, type KubeObject } from './types.js';

/** The annotation prefix of every control. */
const CONTROL_PREFIX = 'sandbox.outpost.dev/';
/** Running but not Ready until this many milliseconds after the start. */
const READY_AFTER_MS = `${CONTROL_PREFIX}ready-after-ms`;
/** `"true"`: Running, Ready False forever. */
export const NEVER_READY = `${CONTROL_PREFIX}never-ready`;
/** `"true"` (exit code 1) or an exit code: the pod ends Failed. */
const FAIL = `${CONTROL_PREFIX}fail`;
/** The exit code of a pod that runs to completion (0 succeeds, anything else fails). */
const EXIT_CODE = `${CONTROL_PREFIX}exit-code`;
/** How long a pod that runs to completion runs, in milliseconds. */
const RUN_MS = `${CONTROL_PREFIX}run-ms`;
/** Log lines (separated by \n) of every container; `log.<container>` for one container. */
const LOG = `${CONTROL_PREFIX}log`;

/** What the pretend kubelet does with one pod. */
export interface PodControls {
  /** Milliseconds between Running and Ready (0: at once). */
  readyAfterMs: number;
  neverReady: boolean;
  /**
   * Set when the containers exit: the exit code (0 succeeded). Undefined for a long-running pod, unless the pod runs
   * to completion by nature (a Job's pod), in which case the kubelet uses 0.
   */
  exitCode?: number;
  /** How long the containers run before exiting, when set explicitly. */
  runMs?: number;
}

function nonNegativeInt(text: string | undefined): number | undefined {
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

function failExitCode(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const t = text.trim().toLowerCase();
  if (t === 'true' || t === 'yes') return 1;
  const n = nonNegativeInt(t);
  return n !== undefined && n > 0 ? n : undefined;
}

/** Controls named by an image `sandbox/<control>[:<value>]` (registry/host prefixes are ignored). */
function imageControls(pod: KubeObject): Partial<Record<string, string>> {
  const spec = isPlainObject(pod.spec) ? pod.spec : {};
  const out: Record<string, string> = {};
  for (const c of (Array.isArray(spec.containers) ? spec.containers : []).filter(isPlainObject)) {
    const image = typeof c.image === 'string' ? c.image : '';
    const m = /(?:^|\/)sandbox\/([a-z-]+)(?::([^@]+))?(?:@.*)?$/.exec(image);
    if (!m) continue;
    const [, control, value] = m;
    if (control === 'never-ready') out[NEVER_READY] = 'true';
    else if (control === 'fail') out[FAIL] = value ?? 'true';
    else if (control === 'ready-after') out[READY_AFTER_MS] = value ?? '0';
    else if (control === 'run') out[RUN_MS] = value ?? '0';
    else if (control === 'exit') out[EXIT_CODE] = value ?? '0';
  }
  return out;
}

/**
 * Reads the controls of a pod (annotations first, then `sandbox/...` images). Unparseable values are ignored.
 * `defaultReadyAfterMs` (the sandbox's `podReadyDelayMs`) is the ready delay of a pod that names none.
 */
export function podControls(pod: KubeObject, defaultReadyAfterMs = 0): PodControls {
  const fromImage = imageControls(pod);
  const ann = (key: string) => pod.metadata.annotations?.[key] ?? fromImage[key];
  const neverReady = ann(NEVER_READY)?.trim().toLowerCase() === 'true';
  const readyAfterMs = nonNegativeInt(ann(READY_AFTER_MS)) ?? defaultReadyAfterMs;
  const failCode = failExitCode(ann(FAIL));
  const exitCode = failCode ?? nonNegativeInt(ann(EXIT_CODE));
  const runMs = nonNegativeInt(ann(RUN_MS));
  return { readyAfterMs, neverReady, exitCode, runMs };
}

/**
 * The log lines a pod's annotations give for one container, or undefined when none are set: `log.<container>` wins
 * over `log`. A trailing newline does not make an empty last line.
 */
export function annotatedLogLines(pod: KubeObject, container: string): string[] | undefined {
  const annotations = pod.metadata.annotations ?? {};
  const text = annotations[`${LOG}.${container}`] ?? annotations[LOG];
  if (typeof text !== 'string') return undefined;
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

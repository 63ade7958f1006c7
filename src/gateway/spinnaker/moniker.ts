/**
 * Spinnaker monikers (app, cluster, stack, detail, sequence) of live Kubernetes objects, read as Clouddriver's
 * namer reads them: the `moniker.spinnaker.io/*` annotations first, else a Frigga parse of `metadata.name`
 * (`web-prod-canary-v003` → app `web`, cluster `web-prod-canary`, sequence 3). Only app, cluster and sequence fall
 * back to the name; stack and detail come from their annotations alone. Names starting with `system:` (Kubernetes'
 * own RBAC objects) are parsed as Clouddriver does: app `system`, cluster the name without its version.
 */
import { registeredKindOf } from '../status/kind-names.js';

/** A moniker as Clouddriver serves it (`moniker` on /manifests); absent optional parts are left out. */
export interface Moniker {
  app: string;
  cluster: string;
  stack?: string;
  detail?: string;
  sequence?: number;
}

/** What a name says about its moniker; `app` and `cluster` are '' when the name is not a Frigga name. */
export interface FriggaName {
  app: string;
  stack?: string;
  detail?: string;
  sequence?: number;
  cluster: string;
}

const NAME_CHARS = 'a-zA-Z0-9._';
const NAME_HYPHEN_CHARS = `\\-${NAME_CHARS}~^`;
/** `<cluster>-v<3 to 6 digits>`; the cluster part is greedy. */
const PUSH = new RegExp(`^([${NAME_HYPHEN_CHARS}]*)-v([0-9]{3,6})$`);
/** `app[-stack[-detail]]`: app and stack without hyphens, detail with. */
const NAME = new RegExp(`^([${NAME_CHARS}]+)(?:-([${NAME_CHARS}]*)(?:-([${NAME_HYPHEN_CHARS}]*?))?)?$`);
const SYSTEM_PREFIX = 'system:';
const SYSTEM_PUSH = /^(.+)-v([0-9]{3,6})$/;

const ANNOTATION = {
  app: 'moniker.spinnaker.io/application',
  cluster: 'moniker.spinnaker.io/cluster',
  stack: 'moniker.spinnaker.io/stack',
  detail: 'moniker.spinnaker.io/detail',
  sequence: 'moniker.spinnaker.io/sequence',
  revision: 'deployment.kubernetes.io/revision',
} as const;

/**
 * Frigga's parse of a name: `app-stack-detail-v003` → app `app`, stack `stack`, detail `detail`, sequence 3, cluster
 * `app-stack-detail`. Empty stack/detail parts are left out (`app--detail` has no stack). A name Frigga cannot parse
 * (blank, or characters outside `a-zA-Z0-9._-~^` such as `:`) gives '' for app and cluster and nothing else.
 */
export function parseFriggaName(name: string): FriggaName {
  if (name.trim() === '') return { app: '', cluster: '' };
  const push = PUSH.exec(name);
  const cluster = push ? push[1]! : name;
  const parts = NAME.exec(cluster);
  if (!parts) return { app: '', cluster: '' };
  const parsed: FriggaName = { app: parts[1]!, cluster };
  if (parts[2]) parsed.stack = parts[2];
  if (parts[3]) parsed.detail = parts[3];
  if (push) parsed.sequence = Number.parseInt(push[2]!, 10);
  return parsed;
}

/** Clouddriver's name parse for monikers: Frigga's, except for `system:` names. */
function parseResourceName(name: string): FriggaName {
  if (!name.startsWith(SYSTEM_PREFIX)) return parseFriggaName(name);
  const push = SYSTEM_PUSH.exec(name);
  const parsed: FriggaName = { app: 'system', cluster: push ? push[1]! : name };
  if (push) parsed.sequence = Number.parseInt(push[2]!, 10);
  return parsed;
}

/**
 * Reading of one annotation as Clouddriver does: absent → the fallback; a value that looks like a JSON string
 * (`"web"`, written by old versions) is unquoted; a value that cannot be read → nothing (not the fallback).
 */
function textAnnotation(annotations: Record<string, unknown>, key: string, fallback: string | undefined): string | undefined {
  const value = annotations[key];
  if (typeof value !== 'string') return fallback;
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  // Jackson reads the first JSON string and ignores what follows it.
  const literal = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(value);
  return literal ? (JSON.parse(literal[0]) as string) : undefined;
}

const INT32_MAX = 2 ** 31 - 1;

/**
 * An integer annotation, read as Jackson reads an Integer: `3`, ` 3 `, `"3"` and `3.7` (truncated) are numbers;
 * leading zeros, out-of-range values and anything else give nothing (not the fallback). Absent → the fallback.
 */
function integerAnnotation(annotations: Record<string, unknown>, key: string, fallback: number | undefined): number | undefined {
  const value = annotations[key];
  if (typeof value !== 'string') return fallback;
  let text = value.trim();
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) text = text.slice(1, -1).trim();
  if (!/^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(text)) return undefined;
  const number = Math.trunc(Number(text));
  return Math.abs(number) <= INT32_MAX ? number : undefined;
}

function recordOf(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The moniker of a live object, as Clouddriver derives it for `/manifests` and its clusters view. Without the
 * cluster annotation the cluster is Frigga's (`web` for `web-v002`), not the `"deployment web"` default Spinnaker's
 * deploy writes into the annotation. A ReplicaSet without a sequence annotation takes its
 * `deployment.kubernetes.io/revision` before the name's version. Parts Clouddriver would send as null are '' (app,
 * cluster) or left out (the rest).
 */
export function monikerOf(object: Record<string, unknown>): Moniker {
  const metadata = recordOf(object.metadata);
  const annotations = recordOf(metadata.annotations);
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  const parsed = parseResourceName(name);
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const isReplicaSet = registeredKindOf(apiVersion, kind)?.name === 'replicaSet';

  const moniker: Moniker = {
    app: textAnnotation(annotations, ANNOTATION.app, parsed.app) ?? '',
    cluster: textAnnotation(annotations, ANNOTATION.cluster, parsed.cluster) ?? '',
  };
  const stack = textAnnotation(annotations, ANNOTATION.stack, undefined);
  if (stack !== undefined) moniker.stack = stack;
  const detail = textAnnotation(annotations, ANNOTATION.detail, undefined);
  if (detail !== undefined) moniker.detail = detail;
  const sequenceFallback = isReplicaSet ? integerAnnotation(annotations, ANNOTATION.revision, parsed.sequence) : parsed.sequence;
  const sequence = integerAnnotation(annotations, ANNOTATION.sequence, sequenceFallback);
  if (sequence !== undefined) moniker.sequence = sequence;
  return moniker;
}

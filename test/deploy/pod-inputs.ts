/**
 * What a container of a rendered Deployment would see: its environment (values, downward-API fields and Secret keys
 * resolved, `$(VAR)` references expanded as the kubelet does) and which volume backs a file path. Tests use it to
 * load the gateway and agent configurations exactly as the pods would.
 */
import type { Manifest } from './kustomize.js';

/** Values the kubelet would supply: downward-API fields and Secret/ConfigMap keys (`name/key`). */
export interface PodFacts {
  fields: Record<string, string>;
  secrets?: Record<string, string>;
}

/** The one container of a Deployment (throws when there are several or none). */
export function onlyContainer(deployment: Manifest): Manifest {
  const containers = deployment.spec?.template?.spec?.containers as Manifest[] | undefined;
  if (containers?.length !== 1) throw new Error(`${deployment.metadata.name}: expected one container`);
  return containers[0]!;
}

/**
 * The container's environment. Throws for a fieldRef or secretKeyRef the facts do not cover, so a test never loads a
 * configuration with a silently missing variable.
 */
export function containerEnv(container: Manifest, facts: PodFacts): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of (container.env ?? []) as Manifest[]) {
    const name = entry.name as string;
    if (entry.value !== undefined) {
      // Kubernetes expands $(VAR) from variables defined earlier in the list; $$ escapes.
      env[name] = String(entry.value).replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, ref: string | undefined) =>
        ref === undefined ? '$' : (env[ref] ?? whole),
      );
    } else if (entry.valueFrom?.fieldRef) {
      const path = entry.valueFrom.fieldRef.fieldPath as string;
      if (facts.fields[path] === undefined) throw new Error(`env ${name}: no value for fieldRef ${path}`);
      env[name] = facts.fields[path]!;
    } else if (entry.valueFrom?.secretKeyRef) {
      const ref = `${entry.valueFrom.secretKeyRef.name}/${entry.valueFrom.secretKeyRef.key}`;
      const value = facts.secrets?.[ref];
      if (value === undefined) throw new Error(`env ${name}: no value for secretKeyRef ${ref}`);
      env[name] = value;
    } else {
      throw new Error(`env ${name}: unsupported source ${JSON.stringify(entry.valueFrom)}`);
    }
  }
  return env;
}

/** The volume a path inside the container falls under: its mount, the volume definition and the path's key in it. */
export interface MountedFile {
  mountPath: string;
  volume: Manifest;
  /** Path relative to the mount (the Secret/ConfigMap key for a flat volume). */
  key: string;
}

/** Finds the mount holding `path`; throws when no mount covers it. */
export function mountedFile(deployment: Manifest, container: Manifest, path: string): MountedFile {
  const mounts = (container.volumeMounts ?? []) as Manifest[];
  const mount = mounts
    .filter((m) => path.startsWith(`${String(m.mountPath).replace(/\/$/, '')}/`))
    .sort((a, b) => String(b.mountPath).length - String(a.mountPath).length)[0];
  if (!mount)
    throw new Error(`${path} is on no volume of ${deployment.metadata.name} (mounts: ${mounts.map((m) => m.mountPath).join(', ')})`);
  const volume = ((deployment.spec.template.spec.volumes ?? []) as Manifest[]).find((v) => v.name === mount.name);
  if (!volume) throw new Error(`mount ${mount.name} has no volume`);
  return { mountPath: mount.mountPath as string, volume, key: path.slice(String(mount.mountPath).replace(/\/$/, '').length + 1) };
}

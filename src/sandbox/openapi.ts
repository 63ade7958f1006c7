/**
 * A minimal OpenAPI v3 surface. kubectl (1.27+) decides whether the server validates fields itself by looking for
 * the `fieldValidation` query parameter on PATCH operations in `/openapi/v3/<group-version>`; when it finds it, `apply`
 * (client- and server-side) needs no client-side schema. The sandbox publishes exactly that: one PATCH operation per
 * kind, tagged with `x-kubernetes-group-version-kind`, and no schemas (kubectl then builds patches from its own types).
 * `/openapi/v2` is not served (404).
 */
import { createHash } from 'node:crypto';
import { apiVersionOf, type KindInfo, type KindRegistry } from './kinds.js';

function groupVersions(registry: KindRegistry): Map<string, KindInfo[]> {
  const out = new Map<string, KindInfo[]>();
  for (const info of registry.all()) {
    for (const version of info.versions) {
      const key = info.group ? `apis/${info.group}/${version}` : `api/${version}`;
      const list = out.get(key) ?? [];
      list.push(info);
      out.set(key, list);
    }
  }
  return out;
}

const PARAMS = ['dryRun', 'fieldManager', 'fieldValidation', 'force'].map((name) => ({
  name,
  in: 'query',
  schema: { type: name === 'force' ? 'boolean' : 'string', uniqueItems: true },
}));

/** The document for one group-version path (`api/v1`, `apis/apps/v1`), or undefined when not served. */
export function openApiV3Document(registry: KindRegistry, gvPath: string): Record<string, unknown> | undefined {
  const kinds = groupVersions(registry).get(gvPath);
  if (!kinds) return undefined;
  const version = gvPath.split('/').pop()!;
  const paths: Record<string, unknown> = {};
  for (const info of kinds) {
    if (info.virtual) continue;
    const base = info.namespaced ? `/${gvPath}/namespaces/{namespace}/${info.plural}/{name}` : `/${gvPath}/${info.plural}/{name}`;
    paths[base] = {
      patch: {
        description: `partially update the specified ${info.kind}`,
        operationId: `patch${info.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group: info.group, version, kind: info.kind },
        parameters: PARAMS,
        responses: { '200': { description: 'OK' }, '201': { description: 'Created' } },
      },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes (Outpost sandbox)', version: apiVersionOf('', 'v1.31.0') },
    paths,
    components: { schemas: {} },
  };
}

/** `/openapi/v3`: the index of group-version documents with content hashes. */
export function openApiV3Index(registry: KindRegistry): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const gvPath of groupVersions(registry).keys()) {
    const doc = JSON.stringify(openApiV3Document(registry, gvPath));
    const hash = createHash('sha256').update(doc).digest('hex').slice(0, 32).toUpperCase();
    paths[gvPath] = { serverRelativeURL: `/openapi/v3/${gvPath}?hash=${hash}` };
  }
  return { paths };
}

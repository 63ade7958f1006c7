/**
 * Strict field check of Kubernetes manifests against the API types @kubernetes/client-node generates from the
 * Kubernetes OpenAPI document (each model's attributeTypeMap). The sandbox stores unknown fields like any server
 * without a schema, so this is what makes a misspelt field (`readinesProbe`, `containerPorts`) fail a test: it
 * reports every key the type does not define and every value of the wrong JSON type, with its path.
 */
import * as k8s from '@kubernetes/client-node';

interface Attribute {
  baseName: string;
  type: string;
}
type Model = { getAttributeTypeMap(): Attribute[] };

const models = k8s as unknown as Record<string, Model | undefined>;

/** The client-node model of an apiVersion + kind (`apps/v1` `Deployment` → V1Deployment), or undefined. */
function modelName(apiVersion: string, kind: string): string | undefined {
  const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
  const name = `${version.charAt(0).toUpperCase()}${version.slice(1)}${kind}`;
  return typeof models[name]?.getAttributeTypeMap === 'function' ? name : undefined;
}

function check(value: unknown, type: string, path: string, problems: string[]): void {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) problems.push(`${path}: expected a list, got ${JSON.stringify(value)}`);
    else value.forEach((item, i) => check(item, array[1]!, `${path}[${i}]`, problems));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (typeof value !== 'object' || Array.isArray(value)) problems.push(`${path}: expected a map, got ${JSON.stringify(value)}`);
    else for (const [k, v] of Object.entries(value)) check(v, map[1]!, `${path}.${k}`, problems);
    return;
  }
  switch (type) {
    case 'any':
    case 'object':
      return;
    case 'string':
    case 'Date':
      if (typeof value !== 'string') problems.push(`${path}: expected a string, got ${JSON.stringify(value)}`);
      return;
    case 'number':
      if (typeof value !== 'number') problems.push(`${path}: expected a number, got ${JSON.stringify(value)}`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') problems.push(`${path}: expected true or false, got ${JSON.stringify(value)}`);
      return;
    case 'IntOrString':
      if (typeof value !== 'string' && typeof value !== 'number')
        problems.push(`${path}: expected a number or a string, got ${JSON.stringify(value)}`);
      return;
  }
  const model = models[type];
  if (typeof model?.getAttributeTypeMap !== 'function') {
    // Enumerations are generated as string unions, not classes.
    if (typeof value !== 'string') problems.push(`${path}: expected a ${type} (string), got ${JSON.stringify(value)}`);
    return;
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push(`${path}: expected an object (${type}), got ${JSON.stringify(value)}`);
    return;
  }
  const attributes = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const childType = attributes.get(key);
    if (childType === undefined) problems.push(`${path}.${key}: unknown field of ${type}`);
    else check(child, childType, `${path}.${key}`, problems);
  }
}

/**
 * Every problem of one object (empty when it matches its type). An apiVersion/kind client-node has no model for is
 * itself a problem: the check must not pass by not knowing a kind.
 */
export function schemaProblems(obj: { apiVersion?: unknown; kind?: unknown }): string[] {
  const name = typeof obj.apiVersion === 'string' && typeof obj.kind === 'string' ? modelName(obj.apiVersion, obj.kind) : undefined;
  if (!name) return [`no API type known for ${String(obj.apiVersion)} ${String(obj.kind)}`];
  const problems: string[] = [];
  check(obj, name, String(obj.kind), problems);
  return problems;
}

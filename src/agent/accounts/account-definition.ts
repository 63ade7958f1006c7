/**
 * Turns an AccountDefinition pushed by the gateway (AccountCommand ADD) into an account configuration, validated by
 * the same schema as `kubernetes.accounts[]` in the config file, so a dynamic account obeys exactly the same rules.
 */
import { isAbsolute, resolve } from 'node:path';
import type { AccountDefinition } from '../../gen/outpost/agent/v1/agent_pb.js';
import { formatIssuePath, type AgentConfigIssue } from '../config/load.js';
import { accountSchema, type AccountConfig } from '../config/schema.js';

/** The definition in the config file's shape (empty proto strings become absent keys). */
function definitionToConfigInput(definition: AccountDefinition): Record<string, unknown> {
  const raw: Record<string, unknown> = {
    name: definition.name,
    serviceAccount: definition.serviceAccount,
    namespaces: [...definition.namespaces],
    kinds: [...definition.kinds],
    omitKinds: [...definition.omitKinds],
    onlyNamespacedResources: definition.onlyNamespacedResources,
    properties: { ...definition.properties },
    customResourceDefinitions: definition.customResources.map((c) =>
      c.scope === '' ? { kind: c.kind } : { kind: c.kind, scope: c.scope },
    ),
  };
  if (definition.kubeconfigFile !== '') raw.kubeconfigFile = definition.kubeconfigFile;
  if (definition.context !== '') raw.context = definition.context;
  return raw;
}

/**
 * Validates a definition. A relative `kubeconfig_file` is resolved against `baseDir` (the config file's directory)
 * or the working directory. Returns the configuration, or every issue with its key path.
 */
export function accountConfigFromDefinition(
  definition: AccountDefinition,
  baseDir: string = process.cwd(),
): { config: AccountConfig; issues?: undefined } | { config?: undefined; issues: AgentConfigIssue[] } {
  const result = accountSchema.safeParse(definitionToConfigInput(definition));
  if (!result.success) {
    return {
      issues: result.error.issues.map((issue) => ({
        path: formatIssuePath(issue.path),
        message: issue.code === 'unrecognized_keys' ? `unknown keys ${issue.keys.join(', ')}` : issue.message,
      })),
    };
  }
  const config = result.data;
  if (config.kubeconfigFile !== undefined && !isAbsolute(config.kubeconfigFile))
    config.kubeconfigFile = resolve(baseDir, config.kubeconfigFile);
  return { config };
}

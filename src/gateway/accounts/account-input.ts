/**
 * Validation of account management input, shared by REST and the AccountService RPCs: account definitions (the
 * agent config's account block plus `zoneId`), state changes and name lists. Everything is checked before anything
 * is written; a problem becomes an {@link AccountAdminError} of kind `invalid` naming the first bad field.
 */
import { create, fromJson, toJson, type JsonValue } from '@bufbuild/protobuf';
import { z } from 'zod';
import { AccountDefinitionSchema, type AccountDefinition } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { AccountSpec, AccountStateChange } from '../../gen/outpost/api/v1/account_service_pb.js';
import { AccountAdminError } from './account-errors.js';
import { isValidAccountName } from '../../shared/account-name.js';

/** Most accounts one request may name. */
const MAX_ACCOUNTS_PER_REQUEST = 1000;

const accountName = z
  .string()
  .refine(
    isValidAccountName,
    "invalid account name (lowercase letters, digits, '-', '.', '_'; must start and end alphanumeric; at most 253 characters)",
  );
const zoneId = z
  .string()
  .max(253)
  .regex(/^[A-Za-z0-9._-]*$/, "invalid zone id (letters, digits, '-', '.', '_')");
const kindName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9]*(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'expected a kind name such as "Deployment" or "Deployment.apps"');
const namespace = z.string().regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'invalid namespace name');

/** One account definition as REST bodies carry it (the agent config's account keys, plus the zone). */
const accountInputSchema = z.strictObject({
  name: accountName,
  kubeconfigFile: z.string().min(1).max(4096).optional(),
  context: z.string().min(1).max(253).optional(),
  serviceAccount: z.boolean().optional(),
  namespaces: z.array(namespace).max(10_000).optional(),
  kinds: z.array(kindName).max(1000).optional(),
  omitKinds: z.array(kindName).max(1000).optional(),
  onlyNamespacedResources: z.boolean().optional(),
  properties: z.record(z.string().max(253), z.union([z.string().max(4096), z.number(), z.boolean()]).transform(String)).optional(),
  customResourceDefinitions: z
    .array(z.strictObject({ kind: kindName, scope: z.enum(['Namespaced', 'Cluster']).optional() }))
    .max(1000)
    .optional(),
  zoneId: zoneId.optional(),
});

/** A validated account definition. */
export interface AccountInput {
  definition: AccountDefinition;
  zoneId: string;
}

/** One validated state change. */
export interface StateChange {
  name: string;
  state: 'ACTIVE' | 'INACTIVE';
  /** Moves the account to this zone first when set. */
  zoneId?: string;
}

const nonEmptyList = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .min(1, 'expected a non-empty array')
    .max(MAX_ACCOUNTS_PER_REQUEST, `at most ${MAX_ACCOUNTS_PER_REQUEST} accounts per request`);

const definitionsSchema = nonEmptyList(accountInputSchema);
const stateChangesSchema = nonEmptyList(
  z.strictObject({
    name: accountName,
    state: z.enum(['ACTIVE', 'INACTIVE'], 'state must be "ACTIVE" or "INACTIVE"'),
    zoneId: zoneId.optional(),
  }),
);
const namesSchema = nonEmptyList(accountName);

/** Validates a REST body of account definitions. */
export function parseDefinitions(body: unknown): AccountInput[] {
  const list = check(definitionsSchema, body);
  unique(list.map((a) => a.name));
  return list.map((a) => ({
    zoneId: a.zoneId ?? '',
    definition: create(AccountDefinitionSchema, {
      name: a.name,
      kubeconfigFile: a.kubeconfigFile ?? '',
      context: a.context ?? '',
      serviceAccount: a.serviceAccount ?? false,
      namespaces: a.namespaces ?? [],
      kinds: a.kinds ?? [],
      omitKinds: a.omitKinds ?? [],
      onlyNamespacedResources: a.onlyNamespacedResources ?? false,
      properties: a.properties ?? {},
      customResources: (a.customResourceDefinitions ?? []).map((c) => ({ kind: c.kind, scope: c.scope ?? '' })),
    }),
  }));
}

/** Validates the `AccountSpec`s of an RPC with the same rules as REST bodies. */
export function parseSpecs(specs: AccountSpec[]): AccountInput[] {
  return parseDefinitions(
    specs.map((s) => {
      const d = s.definition;
      if (!d) throw new AccountAdminError('invalid', 'every account needs a definition');
      return {
        name: d.name,
        ...(d.kubeconfigFile && { kubeconfigFile: d.kubeconfigFile }),
        ...(d.context && { context: d.context }),
        ...(d.serviceAccount && { serviceAccount: true }),
        namespaces: d.namespaces,
        kinds: d.kinds,
        omitKinds: d.omitKinds,
        ...(d.onlyNamespacedResources && { onlyNamespacedResources: true }),
        properties: d.properties,
        customResourceDefinitions: d.customResources.map((c) => ({ kind: c.kind, ...(c.scope && { scope: c.scope }) })),
        ...(s.zoneId && { zoneId: s.zoneId }),
      };
    }),
  );
}

/** Validates a REST body of state changes (`[{name, state, zoneId?}]`). */
export function parseStateChanges(body: unknown): StateChange[] {
  const list = check(stateChangesSchema, body);
  unique(list.map((c) => c.name));
  return list;
}

/** Validates the state changes of an RPC. */
export function parseStateChangeMessages(changes: AccountStateChange[]): StateChange[] {
  return parseStateChanges(changes.map((c) => ({ name: c.name, state: c.state, ...(c.zoneId && { zoneId: c.zoneId }) })));
}

/** Validates a list of account names. */
export function parseNames(body: unknown): string[] {
  const names = check(namesSchema, body);
  unique(names);
  return names;
}

/** Validates one account name (path parameter, RPC field). */
export function parseName(name: unknown): string {
  return check(accountName, name);
}

/** The stored form of a definition (protobuf JSON). */
export function definitionToJson(definition: AccountDefinition): Record<string, unknown> {
  return toJson(AccountDefinitionSchema, definition) as Record<string, unknown>;
}

/** A stored definition back as a message (undefined for agent-declared rows). */
export function definitionFromJson(json: Record<string, unknown> | null | undefined): AccountDefinition | undefined {
  return json ? fromJson(AccountDefinitionSchema, json as JsonValue, { ignoreUnknownFields: true }) : undefined;
}

function check<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
  throw new AccountAdminError('invalid', `${where}: ${issue.message}`);
}

function unique(names: string[]): void {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const n of names) (seen.has(n) ? twice : seen).add(n);
  if (twice.size > 0)
    throw new AccountAdminError('invalid', `the request names ${[...twice].map((n) => JSON.stringify(n)).join(', ')} more than once`, [
      ...twice,
    ]);
}

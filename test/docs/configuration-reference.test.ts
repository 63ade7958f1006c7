/**
 * docs/configuration.md is generated from the zod schemas (scripts/config-reference.ts): regenerating it in memory
 * must give the committed file, every key must carry a description, and the annotated example files must use only
 * keys the reference (hence the parser) knows.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { AGENT_ENV_OVERRIDES } from '../../src/agent/config/load.js';
import { agentConfigSchema } from '../../src/agent/config/schema.js';
import { gatewayEnvVariables } from '../../src/gateway/config/load.js';
import { gatewayConfigSchema } from '../../src/gateway/config/schema.js';
import { CONFIGURATION_DOC, renderConfigurationReference } from '../../scripts/config-reference.js';
import { describeObject, type FieldSection } from '../../scripts/zod-fields.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const committed = readFileSync(`${ROOT}${CONFIGURATION_DOC}`, 'utf8');

/** Dotted key paths of a parsed YAML document, list items written `key[]` (as the reference names them). */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => keyPaths(item, `${prefix}[]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    return [path, ...keyPaths(child, path)];
  });
}

function documentedPaths(sections: FieldSection[]): Set<string> {
  return new Set(sections.flatMap((s) => s.rows.map((r) => r.path)));
}

describe('configuration reference', () => {
  test(`${CONFIGURATION_DOC} is what the schemas generate (run npm run docs:config after changing a schema)`, () => {
    assert.equal(renderConfigurationReference(), committed);
  });

  test('`npm run docs:config -- --check` agrees', async () => {
    const result = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', `${ROOT}scripts/config-docs.ts`, '--check'],
        { cwd: ROOT, timeout: 30_000 },
        (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout + stderr }),
      );
    });
    assert.deepEqual(result, { code: 0, out: `${CONFIGURATION_DOC} is up to date\n` });
  });

  test('every key has a description, and the generator refuses a key without one', () => {
    for (const schema of [gatewayConfigSchema, agentConfigSchema]) {
      for (const section of describeObject(schema)) {
        for (const row of section.rows) assert.ok(row.description && row.description.length > 3, `${row.path} is described`);
      }
    }
    const undocumented = describeObject(z.object({ documented: z.string().describe('yes'), forgotten: z.number().default(1) }));
    assert.deepEqual(
      undocumented[0]!.rows.map((r) => [r.path, r.description]),
      [
        ['documented', 'yes'],
        ['forgotten', undefined],
      ],
    );
  });

  test('every environment variable of both programs is in the reference', () => {
    for (const name of gatewayEnvVariables().keys()) assert.ok(committed.includes(`\`${name}\``), name);
    for (const { env } of AGENT_ENV_OVERRIDES) assert.ok(committed.includes(`\`${env}\``), env);
  });

  test('the annotated example files use only documented keys', () => {
    const gatewayKeys = documentedPaths(describeObject(gatewayConfigSchema));
    const agentKeys = documentedPaths(describeObject(agentConfigSchema));
    const gatewayExample = keyPaths(parseYaml(readFileSync(`${ROOT}config/gateway.example.yaml`, 'utf8')));
    const agentExample = keyPaths(parseYaml(readFileSync(`${ROOT}config/agent.example.yaml`, 'utf8')));
    assert.ok(gatewayExample.length > 20 && agentExample.length > 30);
    // values of free-form maps (properties, permissions) are not keys
    const freeForm = /^kubernetes\.accounts\[\]\.(properties|permissions)\./;
    for (const path of gatewayExample) assert.ok(gatewayKeys.has(path), `gateway example key ${path} is documented`);
    for (const path of agentExample.filter((p) => !freeForm.test(p)))
      assert.ok(agentKeys.has(path), `agent example key ${path} is documented`);
  });
});

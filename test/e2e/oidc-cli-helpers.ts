/**
 * What the end-to-end test of the CLI's sign-in needs besides the kubectl stack (kubectl-helpers.ts): the gateway
 * settings — the usual secure gateway with readAccess `authenticated` and the test provider as `corp`, platform
 * admins reading, writing and using kubectl on every account, developers reading — the sandbox's RBAC for the
 * impersonated groups, and a device sign-in run as a person would: `outpost login --flow device` as a child process,
 * its code entered in Chromium.
 */
import type { Browser } from 'playwright-core';
import type { GatewayConfigInput } from '../../src/gateway/index.js';
import type { TestPki } from '../../testkit/auth-helpers.js';
import { type CliChildResult, startCliChild } from '../../testkit/cli-child.js';
import { completeDeviceSignIn } from '../../testkit/oidc-browser.js';
import { writeKeyFile } from '../../testkit/sign-in-gateway.js';
import { corpProviderConfig } from '../../testkit/oidc-test-provider.js';
import { secureGateway } from './kubectl-helpers.js';

/** The gateway's auth and authorization: the secure gateway's tokens (agent, erin the auditor…) plus provider corp. */
export function signInGateway(dir: string, issuer: string): GatewayConfigInput {
  const base = secureGateway({} as TestPki, dir);
  const corp = corpProviderConfig(issuer);
  return {
    auth: { ...base.auth, readAccess: 'authenticated', oidc: { providers: [corp] } },
    secrets: { keyFile: writeKeyFile(dir) },
    authorization: {
      rules: [
        ...(base.authorization?.rules ?? []),
        { kind: 'oidc', groups: ['corp:platform-admins'], roles: ['read', 'write', 'kube'], accounts: ['*'] },
        { kind: 'oidc', groups: ['corp:developers'], roles: ['read'] },
      ],
    },
  };
}

/** In the sandbox: the impersonated platform admins (`outpost:corp:platform-admins`) may read pods in `demo`. */
export const PLATFORM_ADMINS_RBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: corp-platform-admins, namespace: demo}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: corp-platform-admins, namespace: demo}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: corp-platform-admins}
subjects:
- {kind: Group, name: "outpost:corp:platform-admins", apiGroup: rbac.authorization.k8s.io}
`;

/**
 * Runs `outpost login --flow device` against `gatewayUrl` (TLS with `caFile`) into `configDir`, reads the
 * verification URI and user code it prints, and completes them in Chromium as `login`; resolves with how it ended.
 */
export async function deviceSignIn(
  browser: Browser,
  options: { gatewayUrl: string; caFile: string; configDir: string; login: string },
): Promise<CliChildResult> {
  const child = startCliChild(['login', '--gateway', options.gatewayUrl, '--flow', 'device', '--ca-file', options.caFile], {
    OUTPOST_CONFIG_DIR: options.configDir,
  });
  try {
    const [, uri, code] = await child.waitForStderr(/open (\S+) in a browser and enter the code (\S+)\n/);
    await completeDeviceSignIn(browser, uri!, code!, options.login);
    return await child.result;
  } finally {
    child.kill();
  }
}

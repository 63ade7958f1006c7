/**
 * The gateway configuration keys that hold paths. Relative ones, in the config file or in an `OUTPOST_GATEWAY_*`
 * variable, are resolved against the config file's directory by ./load.ts (as the agent does with its own); without
 * a config file, and in command-line flags, they stay relative to the working directory.
 */
import type { ConfigPathKey } from '../../shared/config-paths.js';

/** `scheme://…`: a database URL (`postgres://…`, `memory://`) rather than a PGlite directory. */
const URL_FORM = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Every path-valued key of the gateway configuration, in the order the reference lists them. */
export const GATEWAY_PATH_KEYS: readonly ConfigPathKey[] = [
  { path: ['database'], isPath: (value) => !URL_FORM.test(value) },
  { path: ['tls', 'certFile'] },
  { path: ['tls', 'keyFile'] },
  { path: ['tls', 'caFile'] },
  { path: ['auth', 'tokens', '*', 'tokenFile'] },
  { path: ['auth', 'jwt', 'secretFile'] },
  { path: ['auth', 'jwt', 'publicKeyFile'] },
  { path: ['auth', 'replicaSecretFile'] },
  { path: ['auth', 'oidc', 'providers', '*', 'clientSecretFile'] },
  { path: ['replicas', 'kubeconfigFile'] },
  { path: ['replicas', 'peerCaFile'] },
  { path: ['web', 'dir'] },
  { path: ['secrets', 'keyFile'] },
  { path: ['spinnaker', 'fiat', 'caFile'] },
  { path: ['spinnaker', 'fiat', 'tokenFile'] },
  ...['http', 'helm', 'github', 'gitRepo'].flatMap((type) =>
    ['passwordFile', 'tokenFile'].map((key) => ({ path: ['spinnaker', 'artifacts', type, 'accounts', '*', key] })),
  ),
  { path: ['spinnaker', 'artifacts', 'gitRepo', 'cloneDir'] },
  ...['sshPrivateKeyFile', 'sshPrivateKeyPassphraseFile', 'sshKnownHostsFile'].map((key) => ({
    path: ['spinnaker', 'artifacts', 'gitRepo', 'accounts', '*', key],
  })),
];

/**
 * Whether a kind, as a client spelled it, may name a Secret. Every entry point names the target of an operation its
 * own way — `Secret` (the API and the dashboard), `secret`/`secrets` (the CLI, which resolves kubectl names, and the
 * agent, which resolves any of them by discovery), `secret` or `Secret.<group>` (Spinnaker), `v1/Secret` — and the
 * Secret rules (redaction of patches, the JSON patch rule of ./secret-patch-rules.ts) must hold for all of them.
 */

/**
 * True when `kind` names a Secret in any spelling: the text after a last `/` (`v1/Secret`), up to a first `.` (a
 * group suffix), is `secret` or `secrets` whatever its case. Deliberately wide: a custom kind called `Secret` in some
 * other group is taken for one too (its patches are judged as a Secret's), because the gateway cannot ask discovery
 * which one a name resolves to; the agent, which can, checks the resolved resource.
 */
export function isSecretKind(kind: string): boolean {
  const name = kind
    .slice(kind.lastIndexOf('/') + 1)
    .split('.')[0]
    .trim()
    .toLowerCase();
  return name === 'secret' || name === 'secrets';
}

/**
 * docs/mutation.md is current (issue 40): every module of mutation/modules.json has a run whose hash matches its
 * files now — a change to a listed module without a new `npm run mutation -- --only <module>` fails here — scores at
 * least 90 % with no survivor left, explains every equivalent mutant, and the page is the one rendered from
 * mutation/results.json. The mutation run itself stays out of the suite.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { moduleHash, readModules, readResults, renderMutationPage } from '../../scripts/mutation-results.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The files that guard trust (issue 40, docs/mutation.md): dropping one from mutation/modules.json — to make a run
 * pass, say — fails here. A new file of this kind is added both here and to a module.
 */
const GUARDS = [
  // Secret values: the agent's scrub, the values it matches, the patch rules, the kinds that name a Secret
  'src/shared/secret-scrub.ts',
  'src/shared/secret-values.ts',
  'src/shared/secret-patch-rules.ts',
  'src/shared/request-secret-values.ts',
  'src/shared/secret-kind.ts',
  // … the gateway's redaction, result scrub and sealing of operations
  'src/gateway/secrets/secret-redaction.ts',
  'src/gateway/operations/result-scrub.ts',
  'src/gateway/operations/operation-sealing.ts',
  // … and the agent's Secret policy for /k8s
  'src/agent/kube-proxy/secret-request.ts',
  'src/agent/kube-proxy/secret-answer.ts',
  'src/agent/kube-proxy/metadata-accept.ts',
  // … and what the agent takes out of an operation's result
  'src/agent/operations/result-secrets.ts',
  // /k8s: the canonical path, the identity asserted, the request info, admission before the body
  'src/shared/kube-path.ts',
  'src/gateway/kube/kube-identity.ts',
  'src/gateway/kube/kube-request-info.ts',
  'src/gateway/kube/kube-admission.ts',
  // … and what the agent sends its cluster: the caller headers' allow-list, the names it impersonates
  'src/agent/kube-proxy/proxy-headers.ts',
  'src/shared/kube-headers.ts',
  'src/shared/kube-names.ts',
  // authorization, principals, admission before the body of the other surfaces
  'src/gateway/auth/authorization.ts',
  'src/gateway/auth/principal.ts',
  'src/gateway/auth/pre-admission.ts',
  // authentication: the credentials read from the headers, static tokens, certificate subjects, JWTs
  'src/gateway/auth/credentials.ts',
  'src/gateway/auth/static-tokens.ts',
  'src/gateway/auth/certificate-subject.ts',
  'src/gateway/auth/jwt-tokens.ts',
  'src/gateway/auth/replica-token.ts',
  // the bearer tokens of the OIDC providers: discovery, the signing keys and their rotation, the claims checked
  'src/gateway/auth/oidc-issuers.ts',
  'src/gateway/auth/oidc-signing-keys.ts',
  // a replica naming its caller to another, which admits the forward again from it
  'src/gateway/auth/vouched-principal.ts',
  // which credential authenticates a request, the client certificate's verdict, token-file revocation on live streams
  'src/gateway/auth/authenticator.ts',
  'src/gateway/auth/client-certificate.ts',
  'src/gateway/auth/token-revocation.ts',
  // the dashboard's session: where the cookie is taken, the CSRF rules, the cookies, the sealed sign-in and tokens
  'src/gateway/auth/browser-session.ts',
  'src/gateway/sign-in/csrf-rules.ts',
  'src/gateway/sign-in/session-cookies.ts',
  'src/gateway/sign-in/sealed-json.ts',
  'src/gateway/sign-in/login-state.ts',
  'src/gateway/sign-in/session-tokens.ts',
  // names and text checked at the doors
  'src/shared/account-name.ts',
  'src/shared/unstorable-text.ts',
  'src/shared/label-selector.ts',
  // ListObjects filters: the SQL built from a label selector, owner and involved-object uids
  'src/gateway/cache/label-selector-sql.ts',
  'src/gateway/cache/object-list-filter.ts',
  'src/gateway/cache/uid-filters.ts',
];

describe('mutation report', () => {
  const modules = readModules(ROOT);
  const results = readResults(ROOT);

  test('every listed module was run on its current files, scores at least 90 % and leaves no survivor', () => {
    for (const m of modules) {
      const r = results.modules.find((x) => x.name === m.name);
      assert.ok(r, `${m.name}: never run (npm run mutation -- --only ${m.name})`);
      assert.equal(
        r.hash,
        moduleHash(ROOT, m),
        `${m.name}: its files changed since the run of ${r.date}: npm run mutation -- --only ${m.name}`,
      );
      assert.ok(r.score >= 90, `${m.name}: ${r.score} % < 90 %`);
      assert.deepEqual(r.survivors, [], `${m.name}: survivors are tests to write, or equivalent mutants to explain`);
      for (const e of r.equivalent) assert.ok(e.reason.trim().length > 10, `${m.name}: ${e.file}:${e.line} equivalent without a reason`);
      for (const file of [...m.files, ...m.tests]) assert.ok(readFileSync(join(ROOT, file)).length > 0, file);
    }
  });

  test('every file that guards trust is in a module', () => {
    const listed = new Set(modules.flatMap((m) => m.files));
    assert.deepEqual(
      GUARDS.filter((f) => !listed.has(f)),
      [],
      'add these to a module of mutation/modules.json',
    );
  });

  test('docs/mutation.md is the page rendered from the results', () => {
    assert.equal(readFileSync(join(ROOT, 'docs/mutation.md'), 'utf8'), renderMutationPage(modules, results));
  });
});

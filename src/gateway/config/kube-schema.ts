/**
 * The `kube` section of the gateway configuration: kubectl through the gateway (docs/kubectl.md) — how callers map to
 * Kubernetes identities and the limits that keep one caller or one cluster from starving the others.
 */
import { z } from 'zod';

// Prefixed names travel in HTTP headers: printable ASCII only, no whitespace (src/shared/kube-names.ts).
const prefix = z
  .string()
  .max(63)
  .regex(/^[\u0021-\u007e]*$/, 'printable ASCII, no whitespace');

export const kubeSchema = z
  .object({
    enabled: z
      .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
      .default(true)
      .describe('Serve `/k8s/{account}/…`: the Kubernetes API of every connected cluster, for subjects with the kube role.'),
    userPrefix: prefix
      .default('outpost:')
      .describe(
        "Prepended to the caller's name to form the impersonated Kubernetes user (`outpost:alice`). Keeps Outpost " +
          "identities apart from the cluster's own; with an empty prefix, names starting with `system:` are refused.",
      ),
    groupsPrefix: prefix.default('outpost:').describe("Prepended to each of the caller's groups to form the impersonated groups."),
    maxConcurrentPerIdentity: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(32)
      .describe('Requests one identity may have open at once (watches and exec sessions count); more get 429.'),
    maxConcurrentPerAccount: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(128)
      .describe('Requests open at once to one account (cluster), across callers; more get 429.'),
    requestTimeoutSeconds: z.coerce
      .number()
      .min(1)
      .max(3600)
      .default(60)
      .describe(
        'Deadline of a request that is not long-running (watches, `logs -f`, exec, attach, port-forward and proxy are ' +
          'exempt); at the deadline it is cancelled in the cluster and answered 504.',
      ),
  })
  .strict();

/** The resolved `kube` section. */
export type GatewayKubeConfig = z.output<typeof kubeSchema>;

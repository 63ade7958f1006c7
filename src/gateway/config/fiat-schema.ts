/**
 * The `spinnaker.fiat` section of the gateway configuration: where Spinnaker's Fiat answers `GET /authorize/{user}`,
 * how long its answers are kept, and the bounds and credentials of the calls (docs/spinnaker.md, "Fiat"). Without
 * `baseUrl` Fiat is off and the Clouddriver routes authorize by `authorization.rules` and `X-SPINNAKER-ACCOUNTS` alone.
 */
import { z } from 'zod';

export const fiatSchema = z
  .object({
    baseUrl: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe(
        "Fiat's base URL (`http://spin-fiat:7003`). When set, every Clouddriver route also checks the user named by " +
          '`X-SPINNAKER-USER` (`anonymous` when absent) against `GET {baseUrl}/authorize/{user}`, as Clouddriver does.',
      ),
    cacheTtlSeconds: z.coerce
      .number()
      .positive()
      .max(3600)
      .default(10)
      .describe("How long a user's permissions from Fiat are used before they are asked for again (fractions allowed)."),
    maxCachedUsers: z.coerce.number().int().min(1).max(1_000_000).default(1000).describe('Users whose permissions are kept at once.'),
    timeoutSeconds: z.coerce
      .number()
      .positive()
      .max(60)
      .default(5)
      .describe('Deadline of one call to Fiat (connection, TLS and the whole answer); past it the call counts as failed.'),
    maxResponseBytes: z.coerce
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(4 * 1024 * 1024)
      .describe("Largest answer read from Fiat (a user's permission view); a larger one counts as failed."),
    caFile: z
      .string()
      .min(1)
      .optional()
      .describe("PEM CA bundle that verifies Fiat's certificate (https base URLs); the system CAs when unset. Re-read on each call."),
    tokenFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'File holding a bearer token sent to Fiat (`Authorization: Bearer …`); none when unset. Re-read on each call, never logged.',
      ),
    legacyFallback: z
      .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
      .default(false)
      .describe(
        "Clouddriver's `services.fiat.legacyFallback`: when Fiat cannot answer, allow every account the request's " +
          '`X-SPINNAKER-ACCOUNTS` names (reads and writes) and every application, instead of refusing. Off: fail closed.',
      ),
  })
  .strict();

/** The resolved `spinnaker.fiat` section. */
export type FiatConfig = z.output<typeof fiatSchema>;

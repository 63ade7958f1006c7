/** Field types the gateway configuration sections share. */
import { z } from 'zod';

/** A TCP port; 0 picks an ephemeral one. */
export const port = z.coerce.number().int().min(0).max(65535);
/** A positive number of seconds, at most a day; fractions are allowed (tests use them). */
export const positiveSeconds = z.coerce.number().positive().max(86_400);

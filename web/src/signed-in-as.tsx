import type { SignedIn } from './auth.js';
import { BreakAfter } from './break-after.js';

/**
 * Who is signed in and what the gateway lets them do, in the header: the identity (`oidc:corp:alice`, wrapping only
 * after its separators) and the effective roles the gateway's rules give them — so a person who cannot reach a view
 * sees why before trying.
 */
export function SignedInAs({ who }: { who: SignedIn }) {
  return (
    <p class="signed-in-as">
      Signed in as{' '}
      <strong data-who="identity">
        <BreakAfter text={who.identity} />
      </strong>
      <span class="signed-in-as-roles" data-who="roles">
        roles: {who.roles.length > 0 ? who.roles.join(', ') : 'none'}
      </span>
    </p>
  );
}

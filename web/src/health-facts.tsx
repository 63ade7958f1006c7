import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { HealthBadge } from './health-badge.js';

/**
 * The "Health" entry of the object page's summary list (a `<dt>`/`<dd>` pair: render it inside the `<dl>`), with
 * the reason as visible text. Nothing for kinds without status rules.
 */
export function HealthFacts({ object }: { object: KubernetesObject }) {
  if (!object.health) return null;
  return (
    <>
      <dt>Health</dt>
      <dd data-fact="health">
        <HealthBadge health={object.health} withReason />
      </dd>
    </>
  );
}

import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { Fact } from './fact.js';
import { HealthBadge } from './health-badge.js';

/**
 * The "Health" entry of the object page's summary list (a Fact: render it inside the `<dl class="facts">`), with
 * the reason as visible text. Nothing for kinds without status rules.
 */
export function HealthFacts({ object }: { object: KubernetesObject }) {
  if (!object.health) return null;
  return (
    <Fact label="Health" fact="health">
      <HealthBadge health={object.health} withReason />
    </Fact>
  );
}

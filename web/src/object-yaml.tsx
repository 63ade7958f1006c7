import { useEffect, useState } from 'preact/hooks';
import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { inKubectlOrder } from '../../src/shared/kubectl-order.js';

/**
 * The region labelled "Object YAML": the cached object as YAML in the API server's field order, exactly as the agent sent
 * it (Secrets arrive with their data already removed; nothing is filtered here). The `yaml` package is loaded on
 * first use, keeping it out of the initial bundle. Follows `object` as it refreshes.
 */
export function ObjectYaml({ object }: { object: KubernetesObject }) {
  const [text, setText] = useState<string | null>(null);
  const [failure, setFailure] = useState('');

  useEffect(() => {
    let current = true;
    import('yaml')
      .then(({ stringify }) => {
        if (current) setText(stringify(inKubectlOrder(object.object ?? {}), { lineWidth: 0 }));
      })
      .catch((e: unknown) => current && setFailure(String(e)));
    return () => {
      current = false;
    };
  }, [object]);

  return (
    <section class="panel" aria-label="Object YAML">
      <h2>YAML</h2>
      {failure && <p class="error">Could not render YAML: {failure}</p>}
      {text === null ? (
        !failure && <p class="loading">Rendering…</p>
      ) : (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the YAML block scrolls; keyboard users need to reach it
        <pre class="yaml" tabIndex={0}>
          {text}
        </pre>
      )}
    </section>
  );
}

import { inKubectlOrder } from '../../src/shared/kubectl-order.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';

/**
 * The region labelled "Object YAML": the cached object as YAML, exactly as the agent sent it (Secrets arrive with
 * their data already removed; nothing is filtered here). The `yaml` package is loaded on first use, keeping it out
 * of the initial bundle. Follows `object` as the list refreshes; says so when the object left the cache.
 */
export function ObjectYaml({
  title,
  object,
  onClose,
}: {
  /** "Deployment demo/web". */
  title: string;
  /** The object's current version, or undefined once it is no longer listed. */
  object: KubernetesObject | undefined;
  onClose: () => void;
}) {
  const [text, setText] = useState<string | null>(null);
  const [failure, setFailure] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => heading.current?.focus(), [title]);
  useEffect(() => {
    let current = true;
    if (!object) return;
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
      <div class="panel-head">
        <h2 tabIndex={-1} ref={heading}>
          {title}
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {!object && <p class="empty">This object is no longer in the cache (deleted, or outside the filter).</p>}
      {failure && <p class="error">Could not render YAML: {failure}</p>}
      {text === null ? (
        !failure && object && <p class="loading">Rendering…</p>
      ) : (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the YAML block scrolls; keyboard users need to reach it
        <pre class="yaml" tabIndex={0}>
          {text}
        </pre>
      )}
    </section>
  );
}

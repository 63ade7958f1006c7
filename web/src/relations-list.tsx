import { HealthBadge } from './health-badge.js';
import { objectHref } from './object-href.js';
import type { Related, RelationLink, Relations, TreeNode } from './relations-load.js';

/** Links of a list the graph stands in for: out of the tab order (-1), so Tab does not reach links nobody sees. */
type LinkTabIndex = -1 | undefined;

function NodeLabel({ node, tabIndex }: { node: Related; tabIndex: LinkTabIndex }) {
  return (
    <>
      {node.object ? (
        <a href={objectHref(node.object)} tabIndex={tabIndex}>
          {node.kind} {node.name}
        </a>
      ) : (
        <span>
          {node.kind} {node.name} <span class="muted">(not in the cache)</span>
        </span>
      )}
      {node.object?.health && (
        <>
          {' '}
          <HealthBadge health={node.object.health} />
        </>
      )}
    </>
  );
}

function Nodes({ nodes, labelledBy, tabIndex }: { nodes: TreeNode[]; labelledBy?: string; tabIndex: LinkTabIndex }) {
  return (
    <ul class="tree" aria-labelledby={labelledBy}>
      {nodes.map((n) => (
        <li key={`${n.kind}/${n.name}`} data-node={`${n.kind}/${n.name}`}>
          <NodeLabel node={n} tabIndex={tabIndex} />
          {n.children.length > 0 && <Nodes nodes={n.children} tabIndex={tabIndex} />}
          {n.more && <p class="muted">More dependents are not shown.</p>}
        </li>
      ))}
    </ul>
  );
}

function LinkItem({ link, tabIndex }: { link: RelationLink; tabIndex: LinkTabIndex }) {
  return (
    <li data-link={`${link.from.kind}/${link.from.name} ${link.verb} ${link.to.kind}/${link.to.name}`}>
      <NodeLabel node={link.from} tabIndex={tabIndex} /> {link.verb} <NodeLabel node={link.to} tabIndex={tabIndex} />
    </li>
  );
}

/**
 * The object's relations as lists, the words for what the graph draws: the owners above it (a Pod's ReplicaSet and
 * its Deployment), the objects below it (a Deployment's ReplicaSets and their Pods, a Service's Endpoints), and the
 * selector and name references (a Service selects a Pod, an Ingress routes to a Service, an HPA scales a workload),
 * each object with its health and a link to its page. With `focusable` false its links leave the tab order: the
 * section then shows the graph and keeps this list, visually hidden, for screen readers only.
 */
export function RelationsList({ relations, focusable }: { relations: Relations; focusable: boolean }) {
  const tabIndex: LinkTabIndex = focusable ? undefined : -1;
  return (
    <>
      {relations.owners.length > 0 && (
        <>
          <h3 id="owners-title">Owned by</h3>
          <ol class="owner-chain" aria-labelledby="owners-title">
            {relations.owners.map((n) => (
              <li key={`${n.kind}/${n.name}`} data-node={`${n.kind}/${n.name}`}>
                <NodeLabel node={n} tabIndex={tabIndex} />
              </li>
            ))}
          </ol>
        </>
      )}
      {relations.dependents.length > 0 && (
        <>
          <h3 id="dependents-title">Dependents</h3>
          <Nodes nodes={relations.dependents} labelledBy="dependents-title" tabIndex={tabIndex} />
          {relations.more && <p class="muted">More dependents are not shown.</p>}
        </>
      )}
      {relations.links.length > 0 && (
        <>
          <h3 id="links-title">Selectors and references</h3>
          <ul class="relation-links" aria-labelledby="links-title">
            {relations.links.map((l) => (
              <LinkItem key={`${l.from.kind}/${l.from.name} ${l.verb} ${l.to.kind}/${l.to.name}`} link={l} tabIndex={tabIndex} />
            ))}
          </ul>
        </>
      )}
    </>
  );
}

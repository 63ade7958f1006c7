import { Code, ConnectError } from '@connectrpc/connect';
import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { ErrorMessage } from './error-message.js';
import { Fact } from './fact.js';
import { HealthFacts } from './health-facts.js';
import { accountsSignal } from './fleet-signals.js';
import { objectTitle, type ObjectRef } from './object-href.js';
import { ObjectEvents } from './object-events.js';
import { ObjectYaml } from './object-yaml.js';
import { ObjectRelations } from './object-relations.js';
import { PageTitle } from './page-title.js';
import { PodLogs } from './pod-logs.js';
import { RolloutPanel } from './rollout-panel.js';
import { hasRollouts } from './rollout-revisions.js';
import { hrefFor } from './router.js';
import { useServices } from './services.js';
import { TimeText } from './time-text.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';

/**
 * One cached object on its own page (`#/objects/{account}/{kind}/{namespace}/{name}`, see object-href.ts): what
 * it is, where it lives, its labels and its YAML. It is fetched with GetObject and again whenever its account
 * receives events, so the page follows the cluster; a deleted object says so instead of showing stale data.
 */
export function ObjectPageView({ target }: { target: ObjectRef }) {
  const { api } = useServices();
  const { fleet } = useFleet();
  const key = JSON.stringify([target.account, target.kind, target.namespace, target.name]);
  const query = useLiveQuery<KubernetesObject>(
    key,
    async (signal) => {
      const got = await api.objects.getObject(target, { signal });
      if (!got.object) throw new ConnectError(`${objectTitle(target)} not returned`, Code.Internal);
      return got.object;
    },
    accountsSignal(fleet, [target.account]),
  );
  const gone = query.error instanceof ConnectError && query.error.code === Code.NotFound;
  const object = gone ? undefined : query.data;
  const listHref = hrefFor('objects', { account: target.account, kind: target.kind, namespace: target.namespace });

  return (
    <>
      <PageTitle title={objectTitle(target)} />
      <p>
        <a href={listHref}>
          All {target.kind} objects{target.namespace ? ` in ${target.namespace}` : ''} of {target.account}
        </a>
      </p>
      {gone ? (
        <p class="empty">This object is not in the cache: it was deleted, or the account does not have it.</p>
      ) : (
        <ErrorMessage error={query.error} context="Could not load the object" />
      )}
      {!object ? (
        query.busy && <p class="loading">Loading the object…</p>
      ) : (
        <>
          <section class="panel" aria-label="Summary">
            <dl class="facts">
              <Fact label="Account">
                <a href={hrefFor(`accounts/${encodeURIComponent(object.account)}`)}>{object.account}</a>
              </Fact>
              <Fact label="Kind">
                {object.kind} <span class="muted">{object.apiVersion}</span>
              </Fact>
              <Fact label="Namespace">{object.namespace || <span class="muted">(cluster)</span>}</Fact>
              <HealthFacts object={object} />
              <Fact label="Labels">
                {Object.keys(object.labels).length === 0 ? (
                  <span class="muted">none</span>
                ) : (
                  <ul class="labels">
                    {Object.entries(object.labels)
                      .sort(([a], [b]) => a.localeCompare(b))
                      .map(([k, v]) => (
                        <li key={k}>
                          <code>
                            {k}={v}
                          </code>
                        </li>
                      ))}
                  </ul>
                )}
              </Fact>
              <Fact label="Updated">
                <TimeText ts={object.updatedAt} />
              </Fact>
            </dl>
          </section>
          <ObjectRelations object={object} />
          {hasRollouts(object) && <RolloutPanel key={object.uid} workload={object} />}
          {object.kind === 'Pod' && <PodLogs key={object.uid} pod={object} />}
          <ObjectEvents object={object} />
          <ObjectYaml object={object} />
        </>
      )}
    </>
  );
}

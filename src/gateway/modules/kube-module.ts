/**
 * The Kubernetes API proxy `/k8s/{account}/…`: kubectl through the gateway, carried over the agent's stream, or
 * forwarded to the replica whose stream serves the account. Always built: with `kube.enabled: false` its endpoint
 * answers every `/k8s` request 404 naming the setting (kube-admission.ts). Its start registers the stop of the
 * requests it forwarded to other replicas — the very forwarder its endpoint uses — which are cut right before the
 * servers close (their callers reconnect to another replica).
 */
import { createKubeEndpoint } from '../kube/kube-endpoint.js';
import { createKubeForwarder } from '../kube/kube-forward.js';
import type { GatewayModule } from './module.js';

/** The kube proxy module (module-list.ts). */
export const kubeModule: GatewayModule = {
  name: 'kube',
  serves: '`/k8s/{account}/…`: kubectl through the gateway',
  build: (core) => {
    const { config } = core;
    // The one forwarder: the instance the shutdown step closes is the one the endpoint forwards with.
    const forwarder = createKubeForwarder({
      owners: core.owners,
      replicas: core.replicas,
      signer: core.signer,
      caFile: config.replicas.peerCaFile ?? config.tls?.caFile,
    });
    const kube = createKubeEndpoint({
      gatewayId: config.id,
      authenticator: core.authenticator,
      registry: core.registry,
      config: config.kube,
      audit: core.audit,
      metrics: core.metrics,
      forwarder,
      logger: core.logger.child({ component: 'kube' }),
    });
    return {
      kube,
      start: () => core.closers.defer('forwarded kubectl requests', () => forwarder.close()),
    };
  },
};

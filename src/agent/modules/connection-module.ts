/**
 * The stream to the gateway: the token source for its credentials, and one connection loop per connection
 * (`clouddriver.connections`), each retrying with backoff forever. Started last, so it stops first: the stop signal
 * (the core's) ends the streams, the watches and the retries, then the loops are awaited.
 */
import { runConnectionLoop } from '../stream/connection-loop.js';
import { createTokenSource } from '../stream/token-source.js';
import { agentVersion } from '../version.js';
import { needPart, type AgentModule } from './module.js';

/** The token source module (module-list.ts): the stream's credentials. */
export const tokenModule: AgentModule = {
  name: 'token',
  serves: 'the credentials of the stream to the gateway (token file, JWT)',
  start: (core) => ({
    token: core.closers.add('token source', createTokenSource(core.config.clouddriver.auth, core.log), (source) => source.close()),
  }),
};

/** The connection module (module-list.ts): the stream(s) to the gateway. */
export const connectionModule: AgentModule = {
  name: 'connection',
  serves: 'the stream(s) to the gateway, reconnecting with backoff',
  start: (core, earlier) => {
    const accounts = needPart(earlier, 'accounts', 'connection');
    const token = needPart(earlier, 'token', 'connection');
    const { states } = core;
    const loops = states.map((connectionState, connection) =>
      runConnectionLoop({
        config: core.config,
        agentId: core.id,
        zone: core.zone,
        version: agentVersion(),
        state: connectionState,
        accounts,
        token,
        operations: core.runners[connection]!,
        recorder: core.metrics,
        logger: core.log,
        signal: core.stop.signal,
        ...(states.length > 1
          ? { connection, otherGatewayId: () => states.find((s) => s !== connectionState && s.connected)?.gatewayId }
          : {}),
      }),
    );
    const loop = Promise.all(loops).then(() => undefined);
    core.closers.defer('connection loop', () => loop);
    // First at close: the stream, the watches and the retries stop.
    core.closers.defer('stop signal', () => core.stop.abort());
    return undefined;
  },
};

import { NONE } from './format.js';

/** How the dashboard names the agent stream transports (`Agent.transport`, `Account.transport`). */
const TRANSPORT_NAMES: Record<string, string> = { grpc: 'gRPC', websocket: 'WebSocket' };

/** The display name of a transport ("gRPC", "WebSocket"); one this page does not know as sent; "" for none. */
function transportName(transport: string): string {
  return TRANSPORT_NAMES[transport] ?? transport;
}

/**
 * The transport an agent stream came over, as a small neutral pill ("gRPC", "WebSocket"); "—" when there is none
 * (an account no live stream caches). The text names it, so the pill's colour carries no meaning.
 */
export function TransportBadge({ transport }: { transport: string }) {
  if (!transport) return <span class="muted">{NONE}</span>;
  return (
    <span class="badge tone-neutral" data-transport={transport}>
      {transportName(transport)}
    </span>
  );
}

import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { useEffect, useState } from 'preact/hooks';
import { formatAgo, formatTime, isoTime, NONE } from './format.js';

/** How often a relative time is redrawn. */
const TICK_MS = 10_000;

/**
 * A timestamp as how long ago it was ("12 s ago", "5 min ago"), redrawn every 10 s so it does not freeze between
 * live updates; the local date and time is the tooltip and the ISO instant the machine value.
 */
export function AgoText({ ts }: { ts: Timestamp | undefined }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), TICK_MS);
    return () => clearInterval(timer);
  }, []);
  const iso = isoTime(ts);
  if (!iso) return <span class="muted">{NONE}</span>;
  return (
    <time dateTime={iso} title={formatTime(ts)}>
      {formatAgo(ts, Math.max(now, Date.now()))}
    </time>
  );
}

import type { ComponentChildren } from 'preact';
import { formatLocalMs } from './format.js';

/**
 * The routed view, greyed and labelled as stale while the fleet stream is down after having been live (`lostAt`
 * set), under a banner saying since when: the lists then show what they had at that time, and a READY from before
 * the cut must not read as current. The banner is a live region (announced when it appears); the view becomes a
 * region named "Stale data…" so assistive tech says it too. Both go when the stream is live again.
 */
export function StaleView({ lostAt, children }: { lostAt: number | null; children: ComponentChildren }) {
  if (lostAt === null) return <div class="route-view">{children}</div>;
  const since = formatLocalMs(lostAt);
  const time = since.slice(11);
  return (
    <>
      <p id="stale-banner" class="stale-banner" role="alert">
        Connection to the gateway lost at <time dateTime={new Date(lostAt).toISOString()}>{time}</time>; the data shown is from then —
        reconnecting…
      </p>
      <section class="route-view is-stale" aria-label={`Stale data, from ${since}`} aria-describedby="stale-banner">
        {children}
      </section>
    </>
  );
}

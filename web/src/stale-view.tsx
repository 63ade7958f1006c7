import type { ComponentChildren } from 'preact';
import { formatLocalMs } from './format.js';

/**
 * The routed view, greyed and labelled as stale while the fleet stream is down after having been live (`lostAt`
 * set), under a banner saying since when: the lists then show what they had at that time, and a READY from before
 * the cut must not read as current. The banner is a live region (announced when it appears); the view becomes a
 * region named "Stale data…" so assistive tech says it too. Both go when the stream is live again. The wrapper
 * element is the same in both states, so the view keeps its state (and its data) across the change.
 */
export function StaleView({ lostAt, children }: { lostAt: number | null; children: ComponentChildren }) {
  const since = lostAt === null ? '' : formatLocalMs(lostAt);
  return (
    <>
      {lostAt !== null && (
        <p id="stale-banner" class="stale-banner" role="alert">
          Connection to the gateway lost at <time dateTime={new Date(lostAt).toISOString()}>{since.slice(11)}</time>; the data shown is from
          then — reconnecting…
        </p>
      )}
      <section
        class={`route-view${lostAt === null ? '' : ' is-stale'}`}
        aria-label={lostAt === null ? undefined : `Stale data, from ${since}`}
        aria-describedby={lostAt === null ? undefined : 'stale-banner'}
      >
        {children}
      </section>
    </>
  );
}

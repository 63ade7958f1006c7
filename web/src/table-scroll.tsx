import type { ComponentChildren } from 'preact';

/**
 * Wraps a wide table so it scrolls sideways inside the page instead of widening it (phones). The wrapper is
 * focusable and labelled, so keyboard users can scroll it with the arrow keys; `label` should name the table.
 */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // A focusable region (WCAG 2.1.1): keyboard users scroll a table wider than the page with the arrow keys.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable to be scrolled by keyboard
    <section class="table-scroll" tabIndex={0} aria-label={label}>
      {children}
    </section>
  );
}

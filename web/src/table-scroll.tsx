import type { ComponentChildren } from 'preact';

/**
 * Wraps a wide table so it scrolls sideways inside the page instead of widening it (phones). The wrapper is
 * focusable and labelled, so keyboard users can scroll it with the arrow keys; `label` should name the table.
 */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}

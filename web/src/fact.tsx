import type { ComponentChildren } from 'preact';

/**
 * One label/value pair of a `<dl class="facts">`: the `<dt>` and its `<dd>` inside one `<div>` (allowed in a
 * `<dl>`), so the list's auto-fill grid places the pair in one cell — label above its value — whatever the number
 * of columns the width gives. `fact` sets `data-fact` on the value (tests find the health by it).
 */
export function Fact({ label, fact, children }: { label: ComponentChildren; fact?: string; children: ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{label}</dt>
      <dd data-fact={fact}>{children}</dd>
    </div>
  );
}

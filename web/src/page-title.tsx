import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';

/**
 * A view's <h1>, also setting the document title. It is the target the app moves focus to after navigation
 * (id "page-title", focusable by script only), so every view must render exactly one, before any loading state.
 */
export function PageTitle({ title, children }: { title: string; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Outpost`;
  }, [title]);
  return (
    <h1 id="page-title" tabIndex={-1}>
      {children ?? title}
    </h1>
  );
}

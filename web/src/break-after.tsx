import { breakSegments } from './text-breaks.js';

/**
 * Text that wraps only after the characters of `after` (default `:`, `/` and `@`; a `<wbr>` there), never inside a
 * word: put it in a cell styled `.break-after` (no `overflow-wrap: anywhere`), so the table gives the column the
 * width of its longest segment.
 */
export function BreakAfter({ text, after }: { text: string; after?: string }) {
  const parts = breakSegments(text, after);
  return (
    <>
      {parts.map((part, i) => (
        <span key={i}>
          {part}
          {i < parts.length - 1 && <wbr />}
        </span>
      ))}
    </>
  );
}

/** Characters after which a name may break: the scheme of a principal, path and e-mail separators. */
const SEPARATORS = /(?<=[:/@])/;

/** `text` cut after each separator (`insecure:anonymous` → `insecure:`, `anonymous`); the whole text when it has none. */
export function breakSegments(text: string): string[] {
  return text.split(SEPARATORS).filter((s) => s !== '');
}

/**
 * Text that wraps only after `:`, `/` or `@` (a `<wbr>` there), never inside a word: put it in a cell styled
 * `.break-after` (no `overflow-wrap: anywhere`), so the table gives the column the width of its longest segment.
 */
export function BreakAfter({ text }: { text: string }) {
  const parts = breakSegments(text);
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

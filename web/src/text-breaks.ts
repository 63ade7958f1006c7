/** Characters after which a name may break: the scheme of a principal, path and e-mail separators. */
const SEPARATORS = /(?<=[:/@])/;

/** `text` cut after each separator (`insecure:anonymous` → `insecure:`, `anonymous`); the whole text when it has none. */
export function breakSegments(text: string): string[] {
  return text.split(SEPARATORS).filter((s) => s !== '');
}

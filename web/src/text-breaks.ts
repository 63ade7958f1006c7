/**
 * `text` cut after each character of `after` (by default the separators of a principal, a path or an e-mail:
 * `insecure:anonymous` → `insecure:`, `anonymous`); the whole text when it has none of them.
 */
export function breakSegments(text: string, after = ':/@'): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (after.includes(text[i] ?? '')) {
      parts.push(text.slice(start, i + 1));
      start = i + 1;
    }
  }
  if (start < text.length) parts.push(text.slice(start));
  return parts;
}

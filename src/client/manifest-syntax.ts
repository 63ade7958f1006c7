/**
 * Catches malformed YAML (or JSON) in manifests before anything is sent: the CLI answers with the file, line and
 * column and exit code 2, and no operation is recorded for a file that could never apply.
 */
import { parseAllDocuments } from 'yaml';

/** Thrown for a manifest text that does not parse; the message names the source, line and column. */
class ManifestSyntaxError extends Error {}

/** Checks every document of `text` (from `source`: a file name, or `stdin`); throws {@link ManifestSyntaxError}. */
export function checkManifestSyntax(text: string, source: string): void {
  for (const doc of parseAllDocuments(text)) {
    const error = doc.errors[0];
    if (!error) continue;
    const at = error.linePos?.[0];
    const where = at ? `line ${at.line}, column ${at.col}` : `offset ${error.pos[0]}`;
    // The parser's message ends with a code excerpt; its first line says what is wrong.
    const what = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new ManifestSyntaxError(`${source}: ${where}: ${what}`);
  }
}

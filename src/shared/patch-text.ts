/**
 * The one reading of a patch's text (JSON, or a single YAML document for convenience), shared by the agent, which
 * sends the parsed document to the cluster, and the gateway, which judges it before storing it: both must see the
 * same operations, or a rule checked on one reading could be dodged by the other.
 */
import { parseAllDocuments } from 'yaml';

/** Thrown for text that is no patch; the message says why and quotes none of the text. */
export class PatchTextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatchTextError';
  }
}

/** Parses `text` as JSON, else as one YAML document. Throws {@link PatchTextError}. */
export function parsePatchText(text: string): unknown {
  if (text.trim() === '') throw new PatchTextError('empty patch');
  try {
    return JSON.parse(text);
  } catch {
    const docs = parseAllDocuments(text);
    const list = Array.isArray(docs) ? docs : [docs];
    const first = list[0]?.errors[0];
    if (list.length !== 1 || first)
      throw new PatchTextError(`the patch is neither JSON nor a single YAML document${first ? `: ${first.message.split('\n')[0]}` : ''}`);
    try {
      return list[0]!.toJS({ maxAliasCount: 100 });
    } catch (err) {
      throw new PatchTextError(`the patch is neither JSON nor a single YAML document: ${(err as Error).message.split('\n')[0]}`);
    }
  }
}

/**
 * How protobuf-es turns the bytes of a `string` field into text, for this process. Its default decoder is a
 * `TextDecoder` with `ignoreBOM: false`, which drops a leading U+FEFF (a byte order mark) as an encoding signature:
 * a field that holds `\ufeffbom` decodes to `bom`. Other protobuf implementations keep the character, and so must the
 * gateway — it validates what arrived, not a shortened copy (an agent's Hello naming account `\ufeffbom` was admitted,
 * and stored, as account `bom`; found by the hostile-input suite).
 */
import { configureTextEncoding } from '@bufbuild/protobuf/wire';

/**
 * Makes protobuf-es keep a leading U+FEFF of every decoded string, in this whole process (the setting is global to
 * protobuf-es). Encoding and UTF-8 validation are as protobuf-es does them. Idempotent; call it before the first
 * message is decoded (startGateway does).
 */
export function keepLeadingByteOrderMarks(): void {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const strictDecoder = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });
  configureTextEncoding({
    encodeUtf8: (text) => encoder.encode(text),
    decodeUtf8: (bytes, strict) => (strict ? strictDecoder : decoder).decode(bytes),
    checkUtf8(text) {
      try {
        encodeURIComponent(text);
        return true;
      } catch {
        return false;
      }
    },
  });
}

import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { formatAgo, formatTime, isoTime, NONE } from './format.js';

/**
 * A timestamp as a <time> element: local date and time as text, the ISO instant as machine value and, with
 * "x ago", as the tooltip (so the exact UTC time is one hover away).
 */
export function TimeText({ ts }: { ts: Timestamp | undefined }) {
  const iso = isoTime(ts);
  if (!iso) return <span class="muted">{NONE}</span>;
  return (
    <time dateTime={iso} title={`${iso} (${formatAgo(ts)})`}>
      {formatTime(ts)}
    </time>
  );
}

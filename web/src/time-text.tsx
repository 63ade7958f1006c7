import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { formatAgo, formatTime, isoTime, NONE } from './format.js';

/** A timestamp as a <time> element: local time as text, ISO instant as machine value, "x ago" as a tooltip. */
export function TimeText({ ts }: { ts: Timestamp | undefined }) {
  const iso = isoTime(ts);
  if (!iso) return <span class="muted">{NONE}</span>;
  return (
    <time dateTime={iso} title={formatAgo(ts)}>
      {formatTime(ts)}
    </time>
  );
}

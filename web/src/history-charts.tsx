import { useState } from 'preact/hooks';
import { HistoryRange, type GetHistoryResponse } from '../../src/gen/outpost/api/v1/metrics_service_pb.js';
import { ErrorMessage } from './error-message.js';
import { chartsOf } from './history-data.js';
import { useServices } from './services.js';
import { TimeSeriesChart } from './time-series-chart.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';

const RANGES = [
  { range: HistoryRange.HOUR, label: 'Last hour', text: 'last hour' },
  { range: HistoryRange.DAY, label: 'Last day', text: 'last 24 hours' },
] as const;

/**
 * "Over time": the charts of MetricsService.GetHistory for the fleet (no `account`) or one account, over the last
 * hour or day. Read again once per step of the answer as the fleet summary's time moves (the WatchFleet stream
 * ticks at least every 15 s), so the charts follow the writer without a timer of their own.
 */
export function HistoryCharts({ account }: { account?: string }) {
  const { api } = useServices();
  const { fleet } = useFleet();
  const [range, setRange] = useState<HistoryRange>(HistoryRange.HOUR);
  const [step, setStep] = useState(10);
  const seconds = fleet?.time ? Number(fleet.time.seconds) : 0;
  const history = useLiveQuery<GetHistoryResponse>(
    `history:${account ?? ''}:${range}`,
    async (signal) => {
      const got = await api.metrics.getHistory({ account: account ?? '', range }, { signal });
      if (got.stepSeconds > 0 && got.stepSeconds !== step) setStep(got.stepSeconds);
      return got;
    },
    fleet ? String(Math.floor(seconds / step)) : null,
  );
  const data = history.data;
  const rangeText = RANGES.find((r) => r.range === range)!.text;
  const title = account ? 'This account over time' : 'The fleet over time';
  return (
    <section aria-labelledby="history-title" class="history" data-range={range}>
      <div class="history-head">
        <h2 id="history-title">{title}</h2>
        <fieldset class="segmented">
          <legend class="visually-hidden">Time range</legend>
          {RANGES.map((r) => (
            <button key={r.range} type="button" aria-pressed={range === r.range ? 'true' : 'false'} onClick={() => setRange(r.range)}>
              {r.label}
            </button>
          ))}
        </fieldset>
      </div>
      <ErrorMessage error={history.error} context="Could not load the history" />
      {!data ? (
        history.busy && <p class="loading">Loading the history…</p>
      ) : (
        <>
          {!data.recording && (
            <p class="muted" data-recording="false">
              No gateway is recording samples now (history.enabled is off everywhere, or no replica runs): the charts end at the last one
              recorded.
            </p>
          )}
          {data.times.length === 0 ? (
            <p class="empty">
              No samples in the {rangeText} yet: a gateway records one every {data.stepSeconds} s.
            </p>
          ) : (
            <div class="chart-grid">
              {chartsOf(data, account === undefined).map((spec) => (
                <TimeSeriesChart key={spec.id} spec={spec} rangeText={`${rangeText}, every ${data.stepSeconds} s`} />
              ))}
            </div>
          )}
        </>
      )}
    </section>
  );
}

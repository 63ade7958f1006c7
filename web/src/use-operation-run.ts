import type { MessageInitShape } from '@bufbuild/protobuf';
import { ConnectError } from '@connectrpc/connect';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { OperationRecord, SubmitOperationRequestSchema } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { describeError } from './error-message.js';
import { isTerminal } from './format.js';
import { followOperation } from './operation-follow.js';
import type { Outcome } from './operation-form.js';
import { useServices } from './services.js';

/** An operation runner for buttons: the outcome so far and the function that submits. */
export interface OperationRun {
  outcome: Outcome;
  /** Submits `request` (wait=false is forced) and follows it to its end; a new run stops following the last. */
  run(request: MessageInitShape<typeof SubmitOperationRequestSchema>): Promise<void>;
  /** Shows `outcome` without submitting (idle, or an error found before sending) and stops following the last run. */
  show(outcome: Outcome): void;
}

/**
 * Submits operations and follows each with followOperation until it is terminal, exposing the outcome for
 * OutcomeText: OperationForm and the views that submit from buttons. Following stops on unmount.
 */
export function useOperationRun(): OperationRun {
  const { api, auth } = useServices();
  const [outcome, setOutcome] = useState<Outcome>({ kind: 'idle' });
  const follow = useRef<AbortController | null>(null);
  useEffect(() => () => follow.current?.abort(), []);

  const run = async (request: MessageInitShape<typeof SubmitOperationRequestSchema>): Promise<void> => {
    follow.current?.abort();
    const ctl = new AbortController();
    follow.current = ctl;
    setOutcome({ kind: 'submitting' });
    const version = auth.state().version;
    let last: OperationRecord | undefined;
    try {
      const { operation } = await api.operations.submitOperation({ ...request, wait: false }, { signal: ctl.signal });
      if (ctl.signal.aborted || !operation) return;
      last = operation;
      const done = isTerminal(operation.state);
      setOutcome({ kind: 'record', record: operation, following: !done });
      if (done) return;
      await followOperation(
        api,
        operation.id,
        (record) => {
          last = record;
          if (!ctl.signal.aborted) setOutcome({ kind: 'record', record, following: !isTerminal(record.state) });
        },
        ctl.signal,
      );
    } catch (e) {
      if (ctl.signal.aborted) return;
      auth.report(e, version);
      setOutcome({ kind: 'error', text: describeError(ConnectError.from(e)), record: last });
    }
  };
  const show = (next: Outcome): void => {
    follow.current?.abort();
    setOutcome(next);
  };
  return { outcome, run, show };
}

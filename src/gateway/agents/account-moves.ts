/**
 * The rules of an account's life on one agent stream: its phases, the events that move it, and which moves are
 * allowed. account-stream-state.ts keeps one record per account and moves it only through {@link nextPlace}; a move
 * this table does not allow throws {@link IllegalAccountMove}, a programming error (the stream serialises the steps
 * that move accounts), never something a peer can cause.
 *
 * Phases (an account `absent` was never announced on the stream, or was removed):
 *
 * | phase     | verdict | claimed | what it means                                                                  |
 * | --------- | ------- | ------- | ------------------------------------------------------------------------------ |
 * | claiming  | —       | yes     | admission reserved it for this stream and asks the database for the lease      |
 * | caching   | CACHING | yes     | the stream caches it: its data is written (while the registry holds the lease) |
 * | standby   | STANDBY | no      | another session caches it; operations may come here; promotion candidate        |
 * | promoting | STANDBY | yes     | a promotion claims it (or claimed it, then failed before telling the agent)     |
 * | refused   | REFUSED | no      | the stream may neither write nor serve it                                       |
 *
 * Two flags ride along: `verdictSent` (the Welcome or AccountVerdicts carrying the admission's verdict was queued: the
 * stream serves an account only from then on, so no operation reaches the agent before its verdict), and `leaseLost`
 * (the stream cached it earlier in the session and lost the lease: data still in flight from then is acknowledged and
 * dropped rather than refused; cleared when it caches the account again).
 *
 * | event           | from                                 | to                          | moved by                        |
 * | --------------- | ------------------------------------ | --------------------------- | ------------------------------- |
 * | claim           | absent                               | claiming                    | admission (Hello, added)        |
 * | claimRefused    | claiming                             | absent                      | admission: the database said no |
 * | admitCaching    | claiming                             | caching                     | Hello, AccountsChanged          |
 * | admitStandby    | absent                               | standby                     | Hello, AccountsChanged          |
 * | admitRefused    | absent                               | refused                     | Hello, AccountsChanged          |
 * | verdictSent     | caching, standby, refused (not sent) | the same, sent              | Welcome, AccountVerdicts queued |
 * | beginPromotion  | standby                              | promoting                   | promotion                       |
 * | promoted        | promoting                            | caching (leaseLost cleared) | promotion: the database granted |
 * | promotionFailed | promoting                            | standby                     | promotion: refused or failed    |
 * | rebound         | standby                              | refused                     | promotion: bound elsewhere now  |
 * | leaseLost       | caching, promoting                   | standby (leaseLost set)     | lease keeper, fenced writes     |
 * | remove          | absent (a no-op), any but claiming   | absent                      | AccountsChanged.removed         |
 * | end             | the whole record                     | ended                       | the stream's end                |
 *
 * After `end` nothing new may start; a claim already in flight may still settle (claimRefused, promoted,
 * promotionFailed): a promotion that was waiting on the database when the stream ended.
 *
 * Invariants (test/gateway/account-stream-state.test.ts checks them after every move): CACHING means claimed; every
 * claimed account is claiming, caching or promoting; an account is served only once its verdict was sent, and only
 * while CACHING or STANDBY (never REFUSED); a `leaseLost` account is never CACHING; an account being claimed has no
 * verdict, no description, and is not served; every account with a verdict has the description the agent last gave.
 */
import { Verdict } from '../../gen/outpost/agent/v1/agent_pb.js';

/** The phase of one account on a stream (the first table above). */
export type AccountPhase = 'claiming' | 'caching' | 'standby' | 'promoting' | 'refused';

/** Where an account can be: a phase, or not on the stream at all. */
export type AccountPlace = AccountPhase | 'absent';

/** The moves of one account (the second table above, but `end`, which moves the whole record). */
const MOVES = {
  claim: { absent: 'claiming' },
  claimRefused: { claiming: 'absent' },
  admitCaching: { claiming: 'caching' },
  admitStandby: { absent: 'standby' },
  admitRefused: { absent: 'refused' },
  verdictSent: { caching: 'caching', standby: 'standby', refused: 'refused' },
  beginPromotion: { standby: 'promoting' },
  promoted: { promoting: 'caching' },
  promotionFailed: { promoting: 'standby' },
  rebound: { standby: 'refused' },
  leaseLost: { caching: 'standby', promoting: 'standby' },
  remove: { absent: 'absent', caching: 'absent', standby: 'absent', promoting: 'absent', refused: 'absent' },
} as const satisfies Record<string, Partial<Record<AccountPlace, AccountPlace>>>;

/** An event that moves one account. */
export type AccountMove = keyof typeof MOVES;

/** Where `event` moves an account to (from wherever it may come). */
export type MoveTarget<E extends AccountMove> = (typeof MOVES)[E][keyof (typeof MOVES)[E]];

/** Every event of the table, `end` included, and `admit` for an admission's batch as a whole. */
export type AccountEvent = AccountMove | 'admit' | 'end';

/** The moves that may still happen after the stream ended: the outcome of a claim already in flight. */
const AFTER_END: ReadonlySet<AccountMove> = new Set<AccountMove>(['claimRefused', 'promoted', 'promotionFailed']);

/**
 * A move the table of account-moves.ts does not allow: a programming error in the stream's handlers, never a peer's
 * doing. `from` is where the account was (its phase, `absent`, or `<phase>, sent` for a verdict sent already),
 * `ended` (nothing new starts on an ended stream), or `twice` (one batch named the account twice).
 */
export class IllegalAccountMove extends Error {
  constructor(
    readonly account: string,
    readonly event: AccountEvent,
    readonly from: string,
  ) {
    super(
      from === 'twice'
        ? `account ${JSON.stringify(account)} on this stream: ${event} names it twice`
        : `account ${JSON.stringify(account)} on this stream: ${event} is not allowed from ${from}`,
    );
    this.name = 'IllegalAccountMove';
  }
}

/**
 * Where `event` moves an account that is at `from`, on a stream that has `ended` or not; throws
 * {@link IllegalAccountMove} when the table does not allow it. The flags are the caller's to check and change.
 */
export function nextPlace<E extends AccountMove>(account: string, event: E, from: AccountPlace, ended: boolean): MoveTarget<E> {
  if (ended && !AFTER_END.has(event)) throw new IllegalAccountMove(account, event, 'ended');
  const to = (MOVES[event] as Partial<Record<AccountPlace, MoveTarget<E>>>)[from];
  if (to === undefined) throw new IllegalAccountMove(account, event, from);
  return to;
}

/** The admission event of a verdict; throws for a verdict admission never gives (unspecified). */
export function admitEvent(account: string, verdict: Verdict): 'admitCaching' | 'admitStandby' | 'admitRefused' {
  if (verdict === Verdict.CACHING) return 'admitCaching';
  if (verdict === Verdict.STANDBY) return 'admitStandby';
  if (verdict === Verdict.REFUSED) return 'admitRefused';
  throw new Error(`admission gave account ${JSON.stringify(account)} no verdict (${Verdict[verdict] ?? verdict})`);
}

/** The verdict each phase stands for (what the agent was, or is about to be, told); none while claiming. */
export const VERDICT_OF: Readonly<Record<AccountPhase, Verdict | undefined>> = {
  claiming: undefined,
  caching: Verdict.CACHING,
  standby: Verdict.STANDBY,
  promoting: Verdict.STANDBY,
  refused: Verdict.REFUSED,
};

/** The phases in which the stream claims the account (in the registry, and in the database once granted). */
export const CLAIMED: ReadonlySet<AccountPhase> = new Set<AccountPhase>(['claiming', 'caching', 'promoting']);

/** The phases whose verdict (CACHING, STANDBY) lets the stream serve the account, once that verdict was sent. */
export const SERVED: ReadonlySet<AccountPhase> = new Set<AccountPhase>(['caching', 'standby', 'promoting']);

/**
 * The accounts of one agent stream, as one record per account moved only by the named transitions of
 * account-moves.ts (its tables give the phases, the flags, the allowed moves and the invariants). The stream's
 * handlers (Hello → Welcome, AccountsChanged, promotion and demotion, the stream's end) move the records; everything
 * else reads them through the views here: which accounts the stream serves (operations), which it may write (data
 * access), the verdict lists of its `agent_sessions` row, its STANDBY accounts (the lease keeper's promotions).
 *
 * How it relates to the two other records of account ownership, which stay where they are:
 * - The session registry (session-registry.ts) maps each account to the one live stream of this replica that claimed
 *   it, and the lease it was granted (epoch, valid-until). Callers pair the moves with it: `claim` and
 *   `beginPromotion` with `registry.claim`; the admission's CACHING and `promoted` come after `registry.grant`; and
 *   `claimRefused`, `promotionFailed`, `leaseLost` and the `remove` of a claimed account with `registry.release`. So
 *   while the stream is live, the record claims an account exactly when the registry names this stream its owner.
 *   When the stream stops, the registry forgets all its claims at once (`registry.remove`), before `end`: the record
 *   keeps them, so the end knows what to release in the database.
 * - The lease in the account's row (`accounts.session_id`, `lease_epoch`, `lease_expires_at`) is what the database
 *   decides: `claimAccounts` grants it (admission, promotion), the lease keeper renews it, `releaseAccounts` gives it
 *   up (the `remove` of a claimed account, and `end`), and another session may take it, which the lease keeper or a
 *   fenced write reports as `leaseLost`. The record writes nothing itself; it says which accounts callers release.
 */
import type { AccountInfo, AccountVerdict, Verdict } from '../../gen/outpost/agent/v1/agent_pb.js';
import {
  admitEvent,
  CLAIMED,
  IllegalAccountMove,
  nextPlace,
  SERVED,
  VERDICT_OF,
  type AccountEvent,
  type AccountMove,
  type AccountPhase,
  type MoveTarget,
} from './account-moves.js';

export { IllegalAccountMove, type AccountPhase } from './account-moves.js';

/** One account's record, as {@link AccountStreamState.record} shows it (a copy: it changes only through moves). */
interface AccountRecord {
  readonly phase: AccountPhase;
  /** What the agent last said about the account (Hello or AccountsChanged); undefined while claiming. */
  readonly info: AccountInfo | undefined;
  /** True once the verdict of its admission was queued to the agent. */
  readonly verdictSent: boolean;
  /** True once the stream lost the account's lease, until it caches it again. */
  readonly leaseLost: boolean;
}

/** What {@link AccountStreamState.remove} did: nothing (never announced), removed it, or removed a claimed account. */
type Removal = 'unknown' | 'removed' | 'released';

/**
 * The accounts of one stream. Call the moves only from the stream's serialised account steps (Hello, AccountsChanged,
 * promotion, demotion) and its end; a move account-moves.ts does not allow throws {@link IllegalAccountMove} and
 * changes nothing. The views may be read at any time.
 */
export interface AccountStreamState {
  /** The account's record (a copy), or undefined when it is absent. */
  record(account: string): AccountRecord | undefined;
  /** The account's phase, or undefined when it is absent. */
  phaseOf(account: string): AccountPhase | undefined;
  /** The account's verdict on this stream: undefined while claiming and when absent. */
  verdictOf(account: string): Verdict | undefined;
  /** What the agent last said about the account (a STANDBY one is claimed with it when promoted). */
  infoOf(account: string): AccountInfo | undefined;
  /** True when operations for the account may be sent here: its verdict was sent and is CACHING or STANDBY. */
  serves(account: string): boolean;
  /** True while the stream claims the account (claiming, caching or promoting): released at the stream's end. */
  claims(account: string): boolean;
  /** True when the stream lost the account's lease and has not cached it again (its late data is dropped). */
  lostLease(account: string): boolean;
  /** The accounts with a verdict: the ones the agent announced and did not remove. */
  announced(): Set<string>;
  /** Every account with a verdict, in the order they were admitted (the session row's verdict lists). */
  verdicts(): Map<string, Verdict>;
  /** The accounts whose verdict is `verdict`, in the order they were admitted. */
  withVerdict(verdict: Verdict): string[];
  /** The accounts the stream claims. */
  claimed(): string[];
  /** True once {@link end} ran. */
  readonly ended: boolean;

  /** Admission reserved the account for this stream: absent → claiming. */
  claim(account: string): void;
  /** The database did not grant the admission's claim: claiming → absent. */
  claimRefused(account: string): void;
  /**
   * Admission decided `verdicts` (a Hello's or an AccountsChanged's); `infos` describe the accounts as the agent did,
   * one per verdict. CACHING moves claiming → caching; STANDBY and REFUSED move absent → standby, refused. The
   * accounts follow the ones admitted before in {@link verdicts} and {@link withVerdict}, in the order given.
   */
  admit(verdicts: readonly AccountVerdict[], infos: readonly AccountInfo[]): void;
  /**
   * The Welcome or AccountVerdicts carrying the admission's verdicts of `accounts` was queued. Returns those the
   * stream serves from now on (CACHING or STANDBY), in the order given.
   */
  verdictSent(accounts: readonly string[]): string[];
  /** A promotion claims the STANDBY account: standby → promoting. */
  beginPromotion(account: string): void;
  /** The database granted the promotion's claim: promoting → caching, and the lost lease is forgotten. */
  promoted(account: string): void;
  /** The promotion's claim was refused or failed: promoting → standby. */
  promotionFailed(account: string): void;
  /** The account is bound to another agent identity now: standby → refused (no longer served). */
  rebound(account: string): void;
  /** The database no longer gives the stream the account's lease: caching or promoting → standby, leaseLost. */
  leaseLost(account: string): void;
  /**
   * The agent removed the account: it leaves the record. Returns `released` when the stream claimed it (the caller
   * releases it in the registry and the database), `unknown` when it was never announced (nothing to do).
   */
  remove(account: string): Removal;
  /** The stream ended: returns the accounts it claims, for the caller to release in the database. Runs once. */
  end(): string[];
}

/** Creates the (empty) accounts of a new stream. */
export function createAccountStreamState(): AccountStreamState {
  return new StreamAccounts();
}

interface MutableRecord {
  phase: AccountPhase;
  info: AccountInfo | undefined;
  verdictSent: boolean;
  leaseLost: boolean;
}

/** A class rather than closures: one lives per agent stream, and a gateway holds thousands of them. */
class StreamAccounts implements AccountStreamState {
  /** In admission order: {@link admit} puts its accounts last (a claimed account's record moves there too). */
  private readonly records = new Map<string, MutableRecord>();
  ended = false;

  record(account: string): AccountRecord | undefined {
    const r = this.records.get(account);
    return r && { ...r };
  }

  phaseOf(account: string): AccountPhase | undefined {
    return this.records.get(account)?.phase;
  }

  verdictOf(account: string): Verdict | undefined {
    const r = this.records.get(account);
    return r && VERDICT_OF[r.phase];
  }

  infoOf(account: string): AccountInfo | undefined {
    return this.records.get(account)?.info;
  }

  serves(account: string): boolean {
    const r = this.records.get(account);
    return r?.verdictSent === true && SERVED.has(r.phase);
  }

  claims(account: string): boolean {
    const r = this.records.get(account);
    return r !== undefined && CLAIMED.has(r.phase);
  }

  lostLease(account: string): boolean {
    return this.records.get(account)?.leaseLost === true;
  }

  announced(): Set<string> {
    return new Set(this.verdicts().keys());
  }

  verdicts(): Map<string, Verdict> {
    const verdicts = new Map<string, Verdict>();
    for (const [name, r] of this.records) {
      const verdict = VERDICT_OF[r.phase];
      if (verdict !== undefined) verdicts.set(name, verdict);
    }
    return verdicts;
  }

  withVerdict(verdict: Verdict): string[] {
    return [...this.records].filter(([, r]) => VERDICT_OF[r.phase] === verdict).map(([name]) => name);
  }

  claimed(): string[] {
    return [...this.records].filter(([, r]) => CLAIMED.has(r.phase)).map(([name]) => name);
  }

  claim(account: string): void {
    this.check(account, 'claim');
    this.records.set(account, { phase: 'claiming', info: undefined, verdictSent: false, leaseLost: false });
  }

  claimRefused(account: string): void {
    this.check(account, 'claimRefused');
    this.records.delete(account);
  }

  admit(verdicts: readonly AccountVerdict[], infos: readonly AccountInfo[]): void {
    const byName = new Map(infos.map((info) => [info.name, info]));
    // Every move is checked before any is made: an illegal one leaves the records as they were.
    this.once(
      verdicts.map((v) => v.account),
      'admit',
    );
    const admitted = verdicts.map(({ account, verdict }) => {
      const phase = this.check(account, admitEvent(account, verdict));
      const info = byName.get(account);
      if (info === undefined) throw new Error(`admission of account ${JSON.stringify(account)} without its description`);
      return { account, record: { phase, info, verdictSent: false, leaseLost: false } };
    });
    for (const { account, record } of admitted) {
      this.records.delete(account);
      this.records.set(account, record);
    }
  }

  verdictSent(accounts: readonly string[]): string[] {
    this.once(accounts, 'verdictSent');
    const records = accounts.map((account) => {
      this.check(account, 'verdictSent');
      const r = this.records.get(account)!;
      if (r.verdictSent) throw new IllegalAccountMove(account, 'verdictSent', `${r.phase}, sent`);
      return r;
    });
    for (const r of records) r.verdictSent = true;
    return accounts.filter((_, i) => SERVED.has(records[i]!.phase));
  }

  beginPromotion(account: string): void {
    this.records.get(account)!.phase = this.check(account, 'beginPromotion');
  }

  promoted(account: string): void {
    const phase = this.check(account, 'promoted');
    const r = this.records.get(account)!;
    r.phase = phase;
    r.leaseLost = false;
  }

  promotionFailed(account: string): void {
    this.records.get(account)!.phase = this.check(account, 'promotionFailed');
  }

  rebound(account: string): void {
    this.records.get(account)!.phase = this.check(account, 'rebound');
  }

  leaseLost(account: string): void {
    const phase = this.check(account, 'leaseLost');
    const r = this.records.get(account)!;
    r.phase = phase;
    r.leaseLost = true;
  }

  remove(account: string): Removal {
    this.check(account, 'remove');
    const r = this.records.get(account);
    if (r === undefined) return 'unknown';
    this.records.delete(account);
    return CLAIMED.has(r.phase) ? 'released' : 'removed';
  }

  end(): string[] {
    if (this.ended) throw new IllegalAccountMove('*', 'end', 'ended'); // '*': the whole record
    this.ended = true;
    return this.claimed();
  }

  /** Where `event` moves the account (account-moves.ts); throws when that move is not allowed now. */
  private check<E extends AccountMove>(account: string, event: E): MoveTarget<E> {
    return nextPlace(account, event, this.records.get(account)?.phase ?? 'absent', this.ended);
  }

  /** Throws when one batch (of `event`) names an account twice. */
  private once(accounts: readonly string[], event: AccountEvent): void {
    const seen = new Set<string>();
    for (const account of accounts) {
      if (seen.has(account)) throw new IllegalAccountMove(account, event, 'twice');
      seen.add(account);
    }
  }
}

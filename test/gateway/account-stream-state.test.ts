/**
 * The per-account state machine of an agent stream (src/gateway/agents/account-stream-state.ts and account-moves.ts),
 * with no network and no database: every allowed move from every place an account can be in, the invariants after
 * each, every move the table does not allow throwing and changing nothing, the rule after the stream's end, and the
 * views other code reads (their order included).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { AccountInfoSchema, AccountVerdictSchema, Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import {
  createAccountStreamState,
  IllegalAccountMove,
  type AccountPhase,
  type AccountStreamState,
} from '../../src/gateway/agents/account-stream-state.js';

const info = (name: string) => create(AccountInfoSchema, { name, apiHost: `https://${name}.example:6443` });
const verdictOf = (account: string, verdict: Verdict) => create(AccountVerdictSchema, { account, verdict });

/** Every event, as a step on account `name` of a state; returns what the move returned. */
const EVENTS = {
  claim: (s: AccountStreamState, name: string) => s.claim(name),
  claimRefused: (s: AccountStreamState, name: string) => s.claimRefused(name),
  admitCaching: (s: AccountStreamState, name: string) => s.admit([verdictOf(name, Verdict.CACHING)], [info(name)]),
  admitStandby: (s: AccountStreamState, name: string) => s.admit([verdictOf(name, Verdict.STANDBY)], [info(name)]),
  admitRefused: (s: AccountStreamState, name: string) => s.admit([verdictOf(name, Verdict.REFUSED)], [info(name)]),
  verdictSent: (s: AccountStreamState, name: string) => s.verdictSent([name]),
  beginPromotion: (s: AccountStreamState, name: string) => s.beginPromotion(name),
  promoted: (s: AccountStreamState, name: string) => s.promoted(name),
  promotionFailed: (s: AccountStreamState, name: string) => s.promotionFailed(name),
  rebound: (s: AccountStreamState, name: string) => s.rebound(name),
  leaseLost: (s: AccountStreamState, name: string) => s.leaseLost(name),
  remove: (s: AccountStreamState, name: string) => s.remove(name),
  end: (s: AccountStreamState) => s.end(),
} as const;
type EventName = keyof typeof EVENTS;
const EVENT_NAMES = Object.keys(EVENTS) as EventName[];

/** An account's record in short: `absent`, or its phase followed by `sent` and `lost` when those flags are set. */
function place(s: AccountStreamState, name: string): string {
  const r = s.record(name);
  if (!r) return 'absent';
  return [r.phase, r.verdictSent ? 'sent' : '', r.leaseLost ? 'lost' : ''].filter(Boolean).join(' ');
}

const VERDICT: Record<AccountPhase, Verdict | undefined> = {
  claiming: undefined,
  caching: Verdict.CACHING,
  standby: Verdict.STANDBY,
  promoting: Verdict.STANDBY,
  refused: Verdict.REFUSED,
};

/** The rules of account-moves.ts, checked on every view of `s` for `names` (and the accounts they hold). */
function checkInvariants(s: AccountStreamState, names: readonly string[]): void {
  for (const name of names) {
    const r = s.record(name);
    const where = `${name} (${place(s, name)})`;
    assert.equal(s.phaseOf(name), r?.phase, where);
    assert.equal(s.infoOf(name), r?.info, where);
    if (!r) {
      assert.equal(s.verdictOf(name), undefined, `${where}: no verdict`);
      assert.equal(s.serves(name), false, `${where}: not served`);
      assert.equal(s.claims(name), false, `${where}: not claimed`);
      assert.equal(s.lostLease(name), false, `${where}: no lost lease`);
      continue;
    }
    const verdict = s.verdictOf(name);
    assert.equal(verdict, VERDICT[r.phase], `${where}: the verdict of its phase`);
    assert.equal(s.claims(name), r.phase === 'claiming' || r.phase === 'caching' || r.phase === 'promoting', `${where}: claimed`);
    if (verdict === Verdict.CACHING) assert.ok(s.claims(name), `${where}: CACHING means claimed`);
    assert.equal(
      s.serves(name),
      r.verdictSent && (verdict === Verdict.CACHING || verdict === Verdict.STANDBY),
      `${where}: served exactly once its CACHING or STANDBY verdict was sent`,
    );
    if (s.lostLease(name)) assert.ok(verdict === Verdict.STANDBY || verdict === Verdict.REFUSED, `${where}: a lost lease is not CACHING`);
    assert.equal(s.lostLease(name), r.leaseLost, where);
    if (r.phase === 'claiming') {
      assert.deepEqual([r.info, r.verdictSent, r.leaseLost], [undefined, false, false], `${where}: a claim in flight is not announced`);
    } else {
      assert.equal(r.info?.name, name, `${where}: an account with a verdict has its description`);
    }
  }
  const verdicts = s.verdicts();
  const all = [...verdicts.keys()];
  assert.deepEqual(s.announced(), new Set(all), 'announced: the accounts with a verdict');
  for (const [name, v] of verdicts) assert.equal(v, s.verdictOf(name), `verdicts() of ${name}`);
  for (const v of [Verdict.CACHING, Verdict.STANDBY, Verdict.REFUSED]) {
    assert.deepEqual(
      s.withVerdict(v),
      all.filter((n) => verdicts.get(n) === v),
      `withVerdict(${Verdict[v]}) in admission order`,
    );
  }
  const claimed = s.claimed();
  for (const name of claimed) assert.ok(s.claims(name), `claimed() lists ${name}, which it claims`);
  for (const name of names) assert.equal(claimed.includes(name), s.claims(name), `claimed() and claims(${name})`);
}

/** Where an account can be, each reached by legal moves from an empty state (the last two only in races). */
const PLACES: Record<string, EventName[]> = {
  absent: [],
  claiming: ['claim'],
  caching: ['claim', 'admitCaching'],
  'caching sent': ['claim', 'admitCaching', 'verdictSent'],
  standby: ['admitStandby'],
  'standby sent': ['admitStandby', 'verdictSent'],
  refused: ['admitRefused'],
  'refused sent': ['admitRefused', 'verdictSent'],
  'promoting sent': ['admitStandby', 'verdictSent', 'beginPromotion'],
  'standby sent lost': ['claim', 'admitCaching', 'verdictSent', 'leaseLost'],
  'promoting sent lost': ['claim', 'admitCaching', 'verdictSent', 'leaseLost', 'beginPromotion'],
  'refused sent lost': ['claim', 'admitCaching', 'verdictSent', 'leaseLost', 'beginPromotion', 'promotionFailed', 'rebound'],
  // A promotion queued behind an AccountsChanged that failed between its admission and its verdicts.
  promoting: ['admitStandby', 'beginPromotion'],
  // A lease lost while the AccountsChanged that admitted the account was failing.
  'standby lost': ['claim', 'admitCaching', 'leaseLost'],
};

/**
 * The allowed moves from each place, written out independently of the code's table: the place each leads to, and
 * what the move returns when it returns something. Every move not listed must throw.
 */
const ALLOWED: Record<string, Partial<Record<EventName, [string, unknown?]>>> = {
  absent: {
    claim: ['claiming'],
    admitStandby: ['standby'],
    admitRefused: ['refused'],
    remove: ['absent', 'unknown'],
    end: ['absent', []],
  },
  claiming: { claimRefused: ['absent'], admitCaching: ['caching'], end: ['claiming', ['a']] },
  caching: { verdictSent: ['caching sent', ['a']], leaseLost: ['standby lost'], remove: ['absent', 'released'], end: ['caching', ['a']] },
  'caching sent': { leaseLost: ['standby sent lost'], remove: ['absent', 'released'], end: ['caching sent', ['a']] },
  standby: {
    verdictSent: ['standby sent', ['a']],
    beginPromotion: ['promoting'],
    rebound: ['refused'],
    remove: ['absent', 'removed'],
    end: ['standby', []],
  },
  'standby sent': {
    beginPromotion: ['promoting sent'],
    rebound: ['refused sent'],
    remove: ['absent', 'removed'],
    end: ['standby sent', []],
  },
  refused: { verdictSent: ['refused sent', []], remove: ['absent', 'removed'], end: ['refused', []] },
  'refused sent': { remove: ['absent', 'removed'], end: ['refused sent', []] },
  'promoting sent': {
    promoted: ['caching sent'],
    promotionFailed: ['standby sent'],
    leaseLost: ['standby sent lost'],
    remove: ['absent', 'released'],
    end: ['promoting sent', ['a']],
  },
  'standby sent lost': {
    beginPromotion: ['promoting sent lost'],
    rebound: ['refused sent lost'],
    remove: ['absent', 'removed'],
    end: ['standby sent lost', []],
  },
  'promoting sent lost': {
    promoted: ['caching sent'],
    promotionFailed: ['standby sent lost'],
    leaseLost: ['standby sent lost'],
    remove: ['absent', 'released'],
    end: ['promoting sent lost', ['a']],
  },
  'refused sent lost': { remove: ['absent', 'removed'], end: ['refused sent lost', []] },
  promoting: {
    promoted: ['caching'],
    promotionFailed: ['standby'],
    leaseLost: ['standby lost'],
    remove: ['absent', 'released'],
    end: ['promoting', ['a']],
  },
  'standby lost': {
    verdictSent: ['standby sent lost', ['a']],
    beginPromotion: ['promoting lost'],
    rebound: ['refused lost'],
    remove: ['absent', 'removed'],
    end: ['standby lost', []],
  },
};

/** The moves that may still come after the stream's end: a claim already in flight settling. */
const AFTER_END = new Set<EventName>(['claimRefused', 'promoted', 'promotionFailed']);

/** A state holding account `a` at `where`, and `other` (caching, sent) beside it; invariants checked on the way. */
function stateAt(where: string): AccountStreamState {
  const s = createAccountStreamState();
  for (const step of ['claim', 'admitCaching', 'verdictSent'] as const) EVENTS[step](s, 'other');
  for (const step of PLACES[where]!) {
    EVENTS[step](s, 'a');
    checkInvariants(s, ['a', 'other']);
  }
  assert.equal(place(s, 'a'), where, `reached ${where}`);
  return s;
}

/** Everything the views show of `s` (to check that a refused move changed nothing). */
function snapshot(s: AccountStreamState, names: readonly string[]) {
  return {
    records: names.map((n) => s.record(n)),
    verdicts: [...s.verdicts()],
    claimed: s.claimed(),
    served: names.filter((n) => s.serves(n)),
    ended: s.ended,
  };
}

describe('account stream state: the moves of one account', () => {
  for (const where of Object.keys(PLACES)) {
    for (const event of EVENT_NAMES) {
      const allowed = ALLOWED[where]![event];
      const other = (returned: unknown) => (event === 'end' && Array.isArray(returned) ? returned.filter((n) => n !== 'other') : returned);
      if (allowed) {
        test(`${where} --${event}--> ${allowed[0]}`, () => {
          const s = stateAt(where);
          const returned = EVENTS[event](s, 'a');
          assert.equal(place(s, 'a'), allowed[0]);
          if (allowed.length > 1) assert.deepEqual(other(returned), allowed[1]);
          checkInvariants(s, ['a', 'other']);
          assert.equal(place(s, 'other'), 'caching sent', 'the other account is untouched');
        });
      } else {
        test(`${where} --${event}--> throws`, () => {
          const s = stateAt(where);
          const before = snapshot(s, ['a', 'other']);
          assert.throws(
            () => EVENTS[event](s, 'a'),
            (err) => err instanceof IllegalAccountMove && err.account === 'a' && err.event === event,
          );
          assert.deepEqual(snapshot(s, ['a', 'other']), before, 'a refused move changes nothing');
        });
      }
    }
  }
});

describe('account stream state: after the stream ended', () => {
  for (const where of Object.keys(PLACES)) {
    for (const event of EVENT_NAMES) {
      const allowed = ALLOWED[where]![event];
      const settles = AFTER_END.has(event) && allowed !== undefined;
      test(`${where}, ended --${event}--> ${settles ? allowed![0] : 'throws'}`, () => {
        const s = stateAt(where);
        s.end();
        assert.equal(s.ended, true);
        if (settles) {
          EVENTS[event](s, 'a');
          assert.equal(place(s, 'a'), allowed![0]);
          checkInvariants(s, ['a', 'other']);
          return;
        }
        const before = snapshot(s, ['a', 'other']);
        assert.throws(
          () => EVENTS[event](s, 'a'),
          // Nothing new starts once ended; a settling move from the wrong place is refused as before the end.
          (err) => err instanceof IllegalAccountMove && err.from === (AFTER_END.has(event) ? (s.phaseOf('a') ?? 'absent') : 'ended'),
        );
        assert.deepEqual(snapshot(s, ['a', 'other']), before);
      });
    }
  }
});

describe('account stream state: batches and views', () => {
  test('a Hello: claims refused and granted, verdicts in the Hello order, served only once sent', () => {
    const s = createAccountStreamState();
    const names = ['x', 'y', 'z', 'w'];
    s.claim('y');
    s.claim('w');
    checkInvariants(s, names);
    assert.deepEqual(s.announced(), new Set(), 'a claim in flight is not announced');
    s.claimRefused('w'); // the database refused it: admission makes it STANDBY instead
    const hello = [
      verdictOf('x', Verdict.STANDBY),
      verdictOf('y', Verdict.CACHING),
      verdictOf('z', Verdict.REFUSED),
      verdictOf('w', Verdict.STANDBY),
    ];
    s.admit(
      hello,
      names.map((n) => info(n)),
    );
    checkInvariants(s, names);
    assert.deepEqual([...s.verdicts().keys()], ['x', 'y', 'z', 'w'], 'the claimed account takes its place in the Hello order');
    assert.deepEqual(
      names.filter((n) => s.serves(n)),
      [],
      'nothing is served before the Welcome is queued',
    );
    assert.deepEqual(s.verdictSent(names), ['x', 'y', 'w']);
    checkInvariants(s, names);
    assert.deepEqual(
      names.filter((n) => s.serves(n)),
      ['x', 'y', 'w'],
    );
    assert.deepEqual(s.withVerdict(Verdict.STANDBY), ['x', 'w']);
    s.leaseLost('y');
    assert.deepEqual(s.withVerdict(Verdict.STANDBY), ['x', 'y', 'w'], 'a demoted account keeps its place');
    s.beginPromotion('y');
    assert.deepEqual(s.withVerdict(Verdict.STANDBY), ['x', 'y', 'w'], 'an account being promoted is still STANDBY');
    s.promoted('y');
    checkInvariants(s, names);
    assert.equal(s.lostLease('y'), false, 'caching again forgets the lost lease');
  });

  test('an AccountsChanged: a removed account leaves, a re-added one comes last', () => {
    const s = createAccountStreamState();
    s.claim('x');
    s.admit([verdictOf('x', Verdict.CACHING), verdictOf('y', Verdict.STANDBY)], [info('y'), info('x')]);
    s.verdictSent(['x', 'y']);
    assert.equal(s.remove('x'), 'released');
    assert.equal(s.remove('y'), 'removed');
    assert.equal(s.remove('never'), 'unknown');
    checkInvariants(s, ['x', 'y', 'never']);
    s.admit([verdictOf('y', Verdict.STANDBY)], [info('y')]);
    s.claim('x');
    s.admit([verdictOf('x', Verdict.CACHING)], [info('x')]);
    assert.deepEqual([...s.verdicts().keys()], ['y', 'x']);
    assert.equal(s.serves('x'), false, 'a re-added account is not served before its verdict is sent again');
    checkInvariants(s, ['x', 'y']);
    assert.deepEqual(s.end(), ['x']);
  });

  test('a batch with one illegal move changes nothing', () => {
    const s = createAccountStreamState();
    s.claim('x');
    const before = snapshot(s, ['x', 'y']);
    assert.throws(
      () => s.admit([verdictOf('y', Verdict.STANDBY), verdictOf('x', Verdict.STANDBY)], [info('x'), info('y')]),
      IllegalAccountMove,
    );
    assert.throws(() => s.admit([verdictOf('y', Verdict.STANDBY), verdictOf('y', Verdict.STANDBY)], [info('y')]), /names it twice/);
    assert.throws(() => s.admit([verdictOf('y', Verdict.STANDBY)], [info('other')]), /without its description/);
    assert.throws(() => s.admit([verdictOf('y', Verdict.UNSPECIFIED)], [info('y')]), /no verdict/);
    assert.deepEqual(snapshot(s, ['x', 'y']), before);
    s.admit([verdictOf('x', Verdict.CACHING), verdictOf('y', Verdict.STANDBY)], [info('x'), info('y')]);
    const admitted = snapshot(s, ['x', 'y']);
    assert.throws(() => s.verdictSent(['x', 'missing']), IllegalAccountMove);
    assert.throws(() => s.verdictSent(['x', 'x']), /names it twice/);
    assert.deepEqual(snapshot(s, ['x', 'y']), admitted);
    s.verdictSent(['x', 'y']);
    assert.throws(
      () => s.verdictSent(['y']),
      (err) => err instanceof IllegalAccountMove && err.from === 'standby, sent',
    );
  });

  test('the end runs once and names what the stream claims, whatever the phase', () => {
    const s = stateAt('promoting sent');
    s.claim('pending');
    assert.deepEqual(s.end().sort(), ['a', 'other', 'pending']);
    assert.throws(() => s.end(), IllegalAccountMove);
    s.promotionFailed('a');
    assert.deepEqual(s.claimed().sort(), ['other', 'pending']);
  });

  test('views return copies', () => {
    const s = stateAt('caching sent');
    (s.record('a') as { phase: string }).phase = 'refused';
    s.verdicts().delete('a');
    s.announced().delete('a');
    assert.equal(place(s, 'a'), 'caching sent');
    assert.deepEqual(s.announced(), new Set(['other', 'a']));
  });
});

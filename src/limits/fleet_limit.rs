//! The fleet's bound on calls in flight to a provider: the limit the fleet learned (the `limit`
//! row), split into shares. A worker's share is held by its seat (one per process and chain) and
//! spent without touching the store: a call within the share costs no write. The store is written
//! only to take more of the limit, to renew a share's lease, to cut the limit at congestion (any
//! worker's 429, hinted 503 or timeout), to grow it, or to give back to a worker that waits. A
//! guard's check holds a share of one call, given back by its report. A worker that dies keeps its
//! share only until its lease ends.
//!
//! The limit starts at the breaker's threshold (a dead provider costs the fleet that many calls,
//! not that many per execution) and moves by the one congestion rule of
//! [`crate::limits::congestion`] in whole calls: in slow start each call served at a full share
//! earns its growth at once (as a window's answer does), after it a seat earns its share's part
//! of a round's growth once it served its share at the full share; a congestion cuts it once per
//! round, to the nearest call: calls sent before the cut bring old news.
//!
//! Sans-IO: [`take`] and [`release`] read the row and propose the next; the seat counts calls.
use crate::config::Chain;
use crate::limits::concurrency::{late_first_byte, FirstByte};
use crate::limits::congestion;
use crate::limits::fair_share::{self, fair, fair_part, shortfall, Party};
use crate::limits::learned_limit::{LimitRow, Share, STALE_MS};
use crate::limits::priority;
use serde::{Deserialize, Serialize};

/// A waiting call looks again after this (plus the line's jitter): a slot frees when a call ends.
pub const RECHECK_MS: u64 = 20;

/// What a provider's rules say about its part of the fleet's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// The limit's start: the breaker's threshold.
    pub start: u32,
    /// Max In Flight (the hard ceiling), else none.
    pub ceiling: u32,
    /// A share's life: a dead worker's part comes back by then (a call's lease).
    pub lease_ms: u64,
    /// A share is renewed once less than this is left (a call's life and a second), so a call
    /// sent within it ends before the share does.
    pub renew_below_ms: u64,
    /// Its calls wait for a slot (`Chain::slot_wait_ms`): they take none at the limit where the
    /// vendor last pushed back (the plateau), leaving the probe above it to the others.
    pub below_plateau: bool,
    /// Its calls' priority (`ChainConfig::priority`): a waiting higher one takes freed slots first.
    pub rank: u8,
}

/// Provider `i`'s part in the fleet's learned limit, when the chain bounds it.
pub fn rules(chain: &Chain, i: usize) -> Option<Rules> {
    let p = &chain.providers[i];
    chain.fleet_limit.then(|| Rules {
        start: p.breaker.threshold,
        ceiling: p.max_in_flight.unwrap_or(u32::MAX),
        lease_ms: chain.call_lease_ms(i),
        renew_below_ms: chain.call_life_ms(i).saturating_add(1_000),
        below_plateau: chain.slot_wait_ms > 0,
        rank: chain.rank,
    })
}

/// Who takes a slot: a worker's seat (it keeps its share between calls) or one call (a guard's
/// ticket: its share ends with the call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taker {
    pub holder: String,
    pub keeps: bool,
    /// Its calls out now.
    pub in_use: u32,
    /// Its calls served at its full share since the limit last changed by it.
    pub served_full: u32,
    /// Waiting at the spent limit since then, unserved (`priority::HOLD_MS`: long enough, it
    /// goes first for one call); none for a call's own share.
    pub held_since: Option<u64>,
    /// Its fair-share key's weight (`Chain::share_weight`; the key is in its holder's name).
    pub weight: u32,
    /// Its rows are this process's memory (the store failed): it keeps to this ([`Seat::safe`]).
    pub safe: Option<u32>,
}

impl Taker {
    /// A taker at weight 1.
    pub fn new(holder: String, keeps: bool, in_use: u32, served_full: u32, held_since: Option<u64>) -> Taker {
        Taker { holder, keeps, in_use, served_full, held_since, weight: 1, safe: None }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Take {
    /// Within its share as stored: go, nothing to write.
    Local,
    /// Go, writing this row (more slots, a renewed lease, a grown limit). `grew`: this write
    /// raised the limit (the seat's count of served calls starts again).
    Write { row: LimitRow, grew: bool },
    /// The limit is spent: look again at `until_ms`; `register`, when set, tells the others
    /// this holder waits (they give back down to their fair part).
    Full { until_ms: u64, register: Option<LimitRow> },
}

/// The fleet's limit as stored, or the start when none is fresh; never above the ceiling.
pub fn limit(row: &LimitRow, now: u64, rules: Rules) -> u32 {
    let fresh = row.limit > 0 && now.saturating_sub(row.updated_ms) < STALE_MS;
    (if fresh { row.limit } else { rules.start }).clamp(1, rules.ceiling.max(1))
}

/// Shares whose lease has not ended.
pub(crate) fn live(row: &LimitRow, now: u64) -> impl Iterator<Item = &Share> {
    row.shares.iter().filter(move |s| s.until_ms > now)
}

/// The slots `holder` may use now: its share, or, while the shares exceed a limit just cut, what
/// is left of the limit after the shares listed before it (every holder computes the same from
/// the same row: together within the limit, and the first ones keep calling).
pub fn allowance(row: &LimitRow, holder: &str, now: u64, rules: Rules) -> u32 {
    let limit = limit(row, now, rules);
    let mut before = 0u32;
    for s in live(row, now) {
        if s.holder == holder {
            return s.slots.min(limit.saturating_sub(before));
        }
        before = before.saturating_add(s.slots);
    }
    0
}

/// The calls held by live shares (Get Provider State: the calls in flight are at most this).
pub fn held(row: &LimitRow, now: u64) -> u32 {
    live(row, now).map(|s| s.slots).sum()
}

/// The row with `holder`'s share set (expired shares dropped), the limit as `limit`.
/// What its waiting keys are owed is counted until now ([`fair_share::accrue`]).
fn with_share(row: &LimitRow, now: u64, limit: u32, share: Option<Share>) -> LimitRow {
    let mut shares: Vec<Share> =
        live(row, now).filter(|s| share.as_ref().is_none_or(|m| m.holder != s.holder)).cloned().collect();
    shares.extend(share);
    let mut next = LimitRow { limit, shares, updated_ms: now, version: row.version.wrapping_add(1), ..row.clone() };
    fair_share::accrue(row, &mut next, now);
    next
}

/// Whether `taker` may send one more call now.
pub fn take(row: &LimitRow, taker: &Taker, now: u64, rules: Rules) -> Take {
    // On this process's memory the safe share is its ceiling: the limit there grows to it at most.
    let rules = Rules { ceiling: taker.safe.map_or(rules.ceiling, |safe| rules.ceiling.min(safe.max(1))), ..rules };
    let limit = limit(row, now, rules);
    let mine = live(row, now).find(|s| s.holder == taker.holder);
    let slots = mine.map_or(0, |s| s.slots);
    // A worker kept waiting long enough goes first for one call, whatever its priority: no
    // priority starves another, nor one worker the others of its own (`priority::HOLD_MS`).
    let rank = priority::rank(rules.rank, taker.held_since, now);
    let share = |slots: u32, wants: bool| Share {
        holder: taker.holder.clone(),
        slots,
        until_ms: now.saturating_add(rules.lease_ms),
        wants,
        rank: if wants { rank } else { rules.rank },
        waits_until_ms: if wants { now + priority::STANDS_MS } else { 0 },
        weight: taker.weight.max(1),
        owed: mine.map_or(0, |m| m.owed),
    };
    let me = Party::of(&taker.holder, taker.weight);
    let allowed = allowance(row, &taker.holder, now, rules);
    // A higher priority waits: this holder takes no free slot and gives back those it holds
    // unused.
    let outranked = priority::outranked(row, &taker.holder, rank, now);
    let give_back = outranked && taker.keeps && taker.in_use < allowed;
    if taker.in_use < allowed && !give_back {
        let renew = mine.is_some_and(|m| m.until_ms.saturating_sub(now) < rules.renew_below_ms);
        // A row gone stale keeps no limit: written again, so the next reader trusts it.
        let stale = row.limit != limit;
        return match renew || stale {
            true => Take::Write { row: with_share(row, now, limit, Some(share(allowed, false))), grew: false },
            false => Take::Local,
        };
    }
    let others: u32 = live(row, now).filter(|s| s.holder != taker.holder).map(|s| s.slots).sum();
    let free = limit.saturating_sub(others + slots);
    // Above what the limit was cut to at the vendor's last push-back (the plateau, cut), a slot
    // probes the vendor: a call that can wait leaves it to the others holding slots and lets one
    // below it free instead (a chat beside a batch meets no 429 of the batch's probing; the
    // plateau itself may sit a call or two above the vendor's capacity). Alone, it probes.
    let probe = rules.below_plateau && others > 0 && row.plateau > 0 && others + slots + 1 > cut(row.plateau, false);
    // A worker kept waiting `HOLD_MS` goes first, whoever else waits.
    let aged = rank != rules.rank;
    if free > 0
        && !probe
        && !outranked
        && (aged || !for_a_waiter(row, me, mine.is_some_and(|m| m.wants), allowed, rank, now, limit))
    {
        // A seat takes up to its share again (its calls come in rounds); a call takes one.
        let more = if taker.keeps { free.min(slots.max(1)) } else { 1 };
        return Take::Write { row: with_share(row, now, limit, Some(share(slots + more, false))), grew: false };
    }
    let step = growth(row, taker.served_full, slots, limit).filter(|_| taker.keeps && limit < rules.ceiling);
    // Growth probes the vendor: not while a higher priority holds slots (its call, sent within
    // the limit, could reach the vendor after the probe and meet the 429 instead); it probes.
    let quiet = priority::quiet_above(row, &taker.holder, rank, now);
    if let Some(step) = step.filter(|_| allowed == slots && !probe && !outranked && quiet) {
        let grown = limit.saturating_add(step).min(rules.ceiling);
        let mut next = with_share(row, now, grown, Some(share(slots + 1, false)));
        next.limit = grown;
        return Take::Write { row: next, grew: true };
    }
    let until_ms = now + RECHECK_MS;
    // At its fair part it asks nobody to give back, unless a lower priority holds slots; a wait
    // that holds lower ranks off is written again before it lapses.
    let registered = mine.is_some_and(|m| {
        let below = priority::above_some(row, &taker.holder, rank, now);
        match m.wants {
            true => m.rank == rank && (!below || priority::registered(m, rank, now)),
            false => !below && f64::from(allowed) >= fair_part(row, me, now, limit).ceil().max(1.0),
        }
    });
    let keep = if give_back { taker.in_use } else { slots };
    let register =
        (taker.keeps && (give_back || !registered)).then(|| with_share(row, now, limit, Some(share(keep, true))));
    Take::Full { until_ms, register }
}

/// Whether `me`, holding `allowed` and asking for a free slot, leaves it to a holder waiting at
/// `rank`: a free slot goes to the waiter whose key is furthest below its fair part (unrounded),
/// counting what its key is owed for the time it waited below it, less the time it held more (a
/// second at a slot off counts a slot, [`fair_share::owed`]): a key whose part is a fraction of
/// a call gets the fraction over time, not only when it is the furthest below as a slot frees. A holder leaves
/// the slot to one as far below as itself or further (else the one who gave it back takes it
/// again, racing the waiter); between waiters as far below, the first listed takes it (two holders
/// of 1.5 at a limit of 3 at 1 each: one takes the third slot, and gives it back at its call's
/// end; rounded down, both left it to the other and it idled).
fn for_a_waiter(row: &LimitRow, me: Party, i_wait: bool, allowed: u32, rank: u8, now: u64, limit: u32) -> bool {
    let below = |p: Party, held: u32| shortfall(row, p, now, limit, held) + fair_share::owed(row, p.key, now);
    let mine = below(me, allowed);
    let mut before_me = true;
    live(row, now).any(|s| {
        if s.holder == me.holder {
            before_me = false;
            return false;
        }
        let ties_win = !i_wait || before_me;
        s.wants && s.rank == rank && {
            let theirs = below(Party::of(&s.holder, s.weight), s.slots);
            theirs - mine > if ties_win { -1e-9 } else { 1e-9 }
        }
    })
}

/// The limit after a congestion at `limit`, by the one rule, to the nearest whole call.
fn cut(limit: u32, slow_start: bool) -> u32 {
    (congestion::cut(f64::from(limit), slow_start).round() as u32).max(1)
}

/// The calls a growth of the limit adds now, by the one rule, for a seat holding `slots` of
/// `limit` that served `served` calls at its full share since its last growth; `None`: not yet.
/// - In slow start each served call earns its three at once: the limit keeps pace with a window,
///   which grows per answer, instead of waiting for a round's last answer (a store write only
///   when a call finds the limit spent).
/// - After it a seat's part of a round is `slots` calls earning `slots / limit` of the round's
///   growth (a fleet of many small shares grows no faster than one worker holding the whole
///   limit would); a growth under a call needs as many more calls.
fn growth(row: &LimitRow, served: u32, slots: u32, limit: u32) -> Option<u32> {
    if row.plateau == 0 && row.suspect_ms > 0 {
        return None;
    }
    let plateau = (row.plateau > 0).then_some(f64::from(row.plateau));
    let per_call = congestion::growth_per_call(f64::from(limit), plateau);
    let calls = if plateau.is_none() { served.max(1) } else { slots.max(1) };
    let earned = per_call * f64::from(calls);
    let (needed, step) = if earned >= 1.0 { (calls, earned as u32) } else { ((1.0 / per_call).ceil() as u32, 1) };
    (slots > 0 && served >= needed).then_some(step)
}

/// What a call's end tells the fleet's row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Released {
    pub holder: String,
    pub keeps: bool,
    /// The holder's calls still out after this one.
    pub in_use: u32,
    /// The call met congestion (a 429, a hinted 503, our deadline).
    pub congested: bool,
    /// Served, its first byte read against the seat's baseline; `slow`: past twice it (the
    /// seat's gradient): in slow start the vendor may queue ([`release`]).
    #[serde(default)]
    pub read: bool,
    #[serde(default)]
    pub slow: bool,
    /// When it was sent: a call sent before the last cut brings old news.
    pub sent_ms: u64,
}

impl Released {
    /// A call's end, with what its first byte told its seat (a guard's call has none).
    pub fn new(holder: String, keeps: bool, in_use: u32, congested: bool, heard: FirstByte, sent_ms: u64) -> Released {
        let FirstByte { read, slow } = heard;
        Released { holder, keeps, in_use, congested, read, slow, sent_ms }
    }
}

/// The row to write after a call ended, or `None` (the usual: nothing changed).
pub fn release(row: &LimitRow, news: &Released, now: u64, rules: Rules) -> Option<LimitRow> {
    let limit = limit(row, now, rules);
    let mine = live(row, now).find(|s| s.holder == news.holder).cloned();
    let me = Party::of(&news.holder, mine.as_ref().map_or(1, |m| m.weight));
    // A seat keeps its share (resized); a call's share ends with it.
    let resized = |slots: u32| mine.clone().filter(|_| news.keeps).map(|m| Share { slots, wants: false, ..m });
    // One cut per round: a call sent before the last cut, or while the shares still hold more
    // than the limit (the calls of the old size are still out at the vendor), brings old news.
    let fresh = news.sent_ms >= row.congested_at_ms && held(row, now) <= limit;
    // A queue confirmed in slow start: it overshot, the vendor answers ever later rather than
    // 429. The half cut, once: past slow start a queued first byte only withholds growth. Not
    // the vendor's word, so not a congestion the executions' windows hear (`congested_at_ms`).
    // In slow start, the one rule for a late first byte ([`late_first_byte`], `suspect_ms`).
    let slow_start = row.plateau == 0;
    let heard = FirstByte { read: news.read, slow: news.slow };
    let (held, queue) = late_first_byte((row.suspect_ms > 0).then_some(row.suspect_ms), news.sent_ms, heard, now);
    if (news.congested || slow_start && queue) && fresh {
        let cut = cut(limit, row.plateau == 0);
        // Its share keeps covering its calls still out: trimmed below them, the limit would count
        // calls the vendor still holds as free.
        let slots = mine.as_ref().map_or(0, |m| m.slots.min(fair(row, me, now, cut).max(news.in_use)));
        let mut next = without(with_share(row, now, cut, resized(slots)), &news.holder, news.keeps);
        next.plateau = limit;
        next.suspect_ms = 0;
        if news.congested {
            next.congested_at_ms = now;
        }
        return Some(next);
    }
    let next = give_back(row, news, now, rules, limit, mine);
    let suspect_ms = held.unwrap_or(0);
    if !slow_start || suspect_ms == row.suspect_ms {
        return next;
    }
    let next = next.unwrap_or_else(|| LimitRow { version: row.version.wrapping_add(1), ..row.clone() });
    Some(LimitRow { suspect_ms, ..next })
}

/// What a call's end gives back to a waiting holder, if anything.
fn give_back(
    row: &LimitRow,
    news: &Released,
    now: u64,
    rules: Rules,
    limit: u32,
    mine: Option<Share>,
) -> Option<LimitRow> {
    let me = Party::of(&news.holder, mine.as_ref().map_or(1, |m| m.weight));
    let resized = |slots: u32| mine.clone().filter(|_| news.keeps).map(|m| Share { slots, wants: false, ..m });
    let slots = mine.as_ref()?.slots;
    let someone_waits = live(row, now).any(|s| s.holder != news.holder && s.wants);
    if news.keeps && !someone_waits {
        return None;
    }
    // A higher priority waits: everything this holder does not use goes to it.
    let keep = match priority::outranked(row, &news.holder, rules.rank, now) {
        true => news.in_use,
        false => news.in_use.max(fair(row, me, now, limit)),
    };
    let changes = !news.keeps || slots > keep;
    // A call's end says nothing new about the limit: its age stays.
    changes.then(|| LimitRow {
        updated_ms: row.updated_ms,
        ..without(with_share(row, now, limit, resized(keep)), &news.holder, news.keeps)
    })
}

/// `row` without `holder`'s share unless it `keeps` it.
fn without(mut row: LimitRow, holder: &str, keeps: bool) -> LimitRow {
    if !keeps {
        row.shares.retain(|s| s.holder != holder);
    }
    row
}

/// A seat none of whose calls is out gives its share back (its execution ended: the next
/// process, or another worker, should not wait for the lease to end).
pub fn leave(row: &LimitRow, holder: &str, now: u64) -> Option<LimitRow> {
    live(row, now).any(|s| s.holder == holder).then(|| {
        let mut next = LimitRow { version: row.version.wrapping_add(1), ..row.clone() };
        next.shares.retain(|s| s.holder != holder && s.until_ms > now);
        next
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const RULES: Rules = Rules {
        start: 5,
        ceiling: u32::MAX,
        lease_ms: 20_000,
        renew_below_ms: 11_000,
        below_plateau: false,
        rank: priority::NORMAL,
    };

    pub(crate) fn seat(holder: &str, in_use: u32, served_full: u32) -> Taker {
        Taker::new(holder.into(), true, in_use, served_full, None)
    }

    fn written(t: Take) -> LimitRow {
        match t {
            Take::Write { row, .. } => row,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_worker_takes_the_threshold_then_calls_within_it_without_writing() {
        let row = written(take(&LimitRow::default(), &seat("a", 0, 0), 0, RULES));
        assert_eq!((row.limit, row.shares[0].slots), (5, 1));
        let row = written(take(&row, &seat("a", 1, 0), 1, RULES));
        assert_eq!(row.shares[0].slots, 2, "the share doubles while it is below the limit");
        assert_eq!(take(&row, &seat("a", 1, 0), 2, RULES), Take::Local, "within its share: nothing written");
        let row = written(take(&row, &seat("a", 2, 0), 2, RULES));
        let row = written(take(&row, &seat("a", 4, 0), 2, RULES));
        assert_eq!(row.shares[0].slots, 5);
        assert!(matches!(take(&row, &seat("a", 5, 0), 3, RULES), Take::Full { .. }), "the limit is spent");
    }

    #[test]
    fn a_second_worker_waits_and_the_first_gives_back_to_its_fair_part_as_calls_end() {
        let mut row = LimitRow::default();
        for in_use in [0, 1, 2, 4] {
            row = written(take(&row, &seat("a", in_use, 0), 0, RULES));
        }
        let Take::Full { register: Some(r), .. } = take(&row, &seat("b", 0, 0), 1, RULES) else { panic!() };
        let back = |in_use| Released {
            holder: "a".into(),
            keeps: true,
            in_use,
            congested: false,
            sent_ms: 0,
            ..Default::default()
        };
        let given = release(&r, &back(4), 2, RULES).unwrap();
        assert_eq!(given.shares.iter().find(|s| s.holder == "a").unwrap().slots, 4, "only what it does not use");
        let given = release(&given, &back(1), 3, RULES).unwrap();
        assert_eq!(given.shares.iter().find(|s| s.holder == "a").unwrap().slots, 2, "down to its fair part");
        let row = written(take(&given, &seat("b", 0, 0), 4, RULES));
        assert_eq!(held(&row, 4), 3);
        assert_eq!(release(&row, &back(0), 5, RULES), None, "nobody waits: the share is kept");
    }

    #[test]
    fn a_slot_given_back_for_a_waiter_is_not_taken_again_by_the_one_that_gave_it() {
        let mut row = LimitRow::default();
        for in_use in [0, 1, 2, 4] {
            row = written(take(&row, &seat("a", in_use, 0), 0, RULES));
        }
        let Take::Full { register: Some(r), .. } = take(&row, &seat("b", 0, 0), 1, RULES) else { panic!() };
        let back =
            Released { holder: "a".into(), keeps: true, in_use: 3, congested: false, sent_ms: 0, ..Default::default() };
        let given = release(&r, &back, 2, RULES).unwrap();
        assert_eq!(given.shares.iter().find(|s| s.holder == "a").unwrap().slots, 3, "one given back");
        assert!(matches!(take(&given, &seat("a", 3, 0), 3, RULES), Take::Full { register: None, .. }), "b's");
        let row = written(take(&given, &seat("b", 0, 0), 4, RULES));
        assert!(row.shares.iter().all(|s| !s.wants), "b took it: nobody waits");
        let row = written(take(&row, &seat("a", 3, 0), 5, RULES));
        assert_eq!(held(&row, 5), 5, "then the free slot is anyone's again");
    }

    #[test]
    fn two_waiting_holders_of_one_and_a_half_at_a_limit_of_three_leave_the_third_slot_to_the_first() {
        let waits = |holder: &str| Share {
            holder: holder.into(),
            slots: 1,
            until_ms: 100,
            wants: true,
            waits_until_ms: 50,
            ..Share::default()
        };
        let row = LimitRow { limit: 3, updated_ms: 1, shares: vec![waits("a"), waits("b")], ..LimitRow::default() };
        assert!(matches!(take(&row, &seat("b", 1, 0), 2, RULES), Take::Full { .. }), "a is as far below: a's");
        let row = written(take(&row, &seat("a", 1, 0), 2, RULES));
        assert_eq!(held(&row, 2), 3, "the third slot is used (rounded down, each left it to the other)");
    }

    #[test]
    fn a_call_that_can_wait_takes_no_slot_above_the_plateaus_cut_the_others_probe_it() {
        let row = LimitRow {
            limit: 5,
            plateau: 5,
            shares: vec![Share { holder: "batch".into(), slots: 4, until_ms: 100, wants: false, ..Share::default() }],
            ..LimitRow::default()
        };
        let waits = Rules { below_plateau: true, ..RULES };
        assert!(matches!(take(&row, &seat("chat", 0, 0), 1, waits), Take::Full { register: Some(_), .. }));
        assert!(matches!(take(&row, &seat("other", 0, 0), 1, RULES), Take::Write { .. }), "a batch probes");
        let high = LimitRow { limit: 5, plateau: 6, ..row.clone() };
        assert!(
            matches!(take(&high, &seat("chat", 0, 0), 1, waits), Take::Full { .. }),
            "the last push-back at 6, the limit grown back to 5: a fifth call probes (the cut of 6 is 4)"
        );
        let freed = LimitRow { shares: vec![Share { slots: 3, ..row.shares[0].clone() }], ..row.clone() };
        assert!(matches!(take(&freed, &seat("chat", 0, 0), 1, waits), Take::Write { .. }), "below it: taken");
        let alone = LimitRow { limit: 1, plateau: 2, shares: Vec::new(), ..row };
        assert!(matches!(take(&alone, &seat("chat", 0, 0), 1, waits), Take::Write { .. }), "alone: it probes");
    }

    #[test]
    fn in_slow_start_a_late_first_byte_holds_growth_until_a_call_sent_after_it_says_whether_the_vendor_queues() {
        let a = Share { holder: "a".into(), slots: 8, until_ms: 20_000, ..Default::default() };
        let row = LimitRow { limit: 8, shares: vec![a], ..Default::default() };
        let grows =
            |row: &LimitRow, now| matches!(take(row, &seat("a", 8, 8), now, RULES), Take::Write { grew: true, .. });
        assert!(grows(&row, 100), "slow start: its served calls grow the limit");
        let ended = |sent_ms, slow| Released {
            holder: "a".into(),
            keeps: true,
            in_use: 7,
            read: true,
            slow,
            sent_ms,
            ..Default::default()
        };
        // A call out while this process stalled reads late: growth holds, nothing is cut.
        let suspect = release(&row, &ended(100, true), 500, RULES).unwrap();
        assert_eq!((suspect.limit, suspect.plateau, suspect.suspect_ms), (8, 0, 500));
        assert!(!grows(&suspect, 510));
        assert_eq!(release(&suspect, &ended(200, true), 520, RULES), None, "sent before it: the same stall");
        // A call sent after it answers as before: it was the stall, growth goes on.
        let cleared = release(&suspect, &ended(600, false), 900, RULES).unwrap();
        assert_eq!((cleared.limit, cleared.suspect_ms), (8, 0));
        assert!(grows(&cleared, 910));
        // The vendor queues: the call sent after the first late one is late too. The half cut.
        let suspect = release(&cleared, &ended(800, true), 1_000, RULES).unwrap();
        let cut = release(&suspect, &ended(1_100, true), 1_400, RULES).unwrap();
        assert_eq!((cut.limit, cut.plateau, cut.suspect_ms, cut.congested_at_ms), (4, 8, 0, 0));
    }

    #[test]
    fn a_congestion_cuts_the_limit_once_per_round_and_the_calls_out_stay_counted() {
        let mut row = LimitRow::default();
        for (h, in_use) in [("a", 0), ("a", 1), ("a", 2), ("b", 0)] {
            row = written(take(&row, &seat(h, in_use, 0), 0, RULES));
        }
        let congested = |h: &str, sent_ms| Released {
            holder: h.into(),
            keeps: true,
            in_use: 3,
            congested: true,
            sent_ms,
            ..Default::default()
        };
        let cut = release(&row, &congested("a", 1), 10, RULES).unwrap();
        assert_eq!(
            (cut.limit, cut.plateau, cut.congested_at_ms),
            (3, 5, 10),
            "slow start: halved, to the nearest call"
        );
        let a = cut.shares.iter().find(|s| s.holder == "a").unwrap();
        assert_eq!(a.slots, 3, "its share still covers its 3 calls out: nobody takes them as free");
        assert!(matches!(take(&cut, &seat("c", 0, 0), 11, RULES), Take::Full { .. }));
        let late = Released { sent_ms: 11, ..congested("b", 11) };
        assert_eq!(release(&cut, &late, 12, RULES), None, "the calls of the old size are still out: old news");
        assert_eq!(release(&cut, &congested("b", 5), 11, RULES), None, "sent before the cut: old news");
        let uses: u32 = ["a", "b"].iter().map(|h| allowance(&cut, h, 11, RULES)).sum();
        assert!(uses <= cut.limit, "together within the cut limit: {uses}");
    }

    #[test]
    fn growth_needs_calls_served_at_the_full_share_each_at_once_in_slow_start_and_slows_below_the_plateau() {
        let mut row = LimitRow::default();
        for in_use in [0, 1, 2, 4] {
            row = written(take(&row, &seat("a", in_use, 0), 0, RULES));
        }
        assert!(matches!(take(&row, &seat("a", 5, 0), 1, RULES), Take::Full { .. }));
        let Take::Write { row: grown, grew: true } = take(&row, &seat("a", 5, 2), 1, RULES) else { panic!() };
        assert_eq!(grown.limit, 11, "slow start: each served call earns three more at once");
        let Take::Write { row: round, grew: true } = take(&row, &seat("a", 5, 5), 1, RULES) else { panic!() };
        assert_eq!(round.limit, 20, "a round served: four times the limit");
        let after = LimitRow { plateau: 8, limit: 5, ..row.clone() };
        let Take::Write { row: one, grew: true } = take(&after, &seat("a", 5, 5), 1, RULES) else { panic!() };
        assert_eq!(one.limit, 6, "after a congestion: one per round");
        let full = vec![Share { holder: "a".into(), slots: 20, until_ms: 20_000, wants: false, ..Share::default() }];
        let far = LimitRow { plateau: 40, limit: 20, shares: full, ..row.clone() };
        let Take::Write { row: half, grew: true } = take(&far, &seat("a", 20, 20), 1, RULES) else { panic!() };
        assert_eq!(half.limit, 30, "far below the plateau: half the way back to it");
        let near = LimitRow { plateau: 6, ..after };
        assert!(matches!(take(&near, &seat("a", 5, 5), 1, RULES), Take::Full { .. }), "below the plateau: 8 rounds");
        assert!(matches!(take(&near, &seat("a", 5, 40), 1, RULES), Take::Write { grew: true, .. }));
        let capped = Rules { ceiling: 5, ..RULES };
        assert!(matches!(take(&row, &seat("a", 5, 99), 1, capped), Take::Full { .. }), "Max In Flight holds");
    }

    #[test]
    fn a_guarded_call_holds_one_slot_until_its_report_and_a_dead_workers_share_ends_with_its_lease() {
        let call = Taker::new("t1".into(), false, 0, 0, None);
        let row = written(take(&LimitRow::default(), &call, 0, RULES));
        assert_eq!(
            row.shares,
            vec![Share { holder: "t1".into(), slots: 1, until_ms: 20_000, wants: false, ..Share::default() }]
        );
        let done = Released {
            holder: "t1".into(),
            keeps: false,
            in_use: 0,
            congested: false,
            sent_ms: 0,
            ..Default::default()
        };
        assert!(release(&row, &done, 5, RULES).unwrap().shares.is_empty());
        let mut dead = LimitRow::default();
        for in_use in [0, 1, 2, 4] {
            dead = written(take(&dead, &seat("dead", in_use, 0), 0, RULES));
        }
        assert!(matches!(take(&dead, &seat("b", 0, 0), 19_999, RULES), Take::Full { .. }));
        assert!(matches!(take(&dead, &seat("b", 0, 0), 20_000, RULES), Take::Write { .. }), "its lease ended");
    }

    #[test]
    fn a_share_is_renewed_before_a_call_could_outlive_it_and_an_idle_seat_leaves() {
        let row = written(take(&LimitRow::default(), &seat("a", 0, 0), 0, RULES));
        assert_eq!(take(&row, &seat("a", 0, 0), 8_999, RULES), Take::Local);
        let renewed = written(take(&row, &seat("a", 0, 0), 9_001, RULES));
        assert_eq!(renewed.shares[0].until_ms, 29_001);
        assert!(leave(&renewed, "a", 9_002).unwrap().shares.is_empty());
        assert_eq!(leave(&renewed, "b", 9_002), None);
    }
}

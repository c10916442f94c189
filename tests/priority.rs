//! Priority at the fleet's limit (`src/limits/priority.rs`), as the scenarios of issue 59 tell
//! it: a chat at High beside a batch at Normal on one spent limit, on an injected clock.
use resilient_engine::limits::fleet_limit::{held, release, take, Released, Rules, Take, Taker};
use resilient_engine::limits::learned_limit::{LimitRow, Share};
use resilient_engine::limits::priority::{HIGH, HOLD_MS, LOW, NORMAL, STANDS_MS};

fn rules(rank: u8) -> Rules {
    Rules { start: 4, ceiling: u32::MAX, lease_ms: 20_000, renew_below_ms: 11_000, below_plateau: false, rank }
}

fn seat(holder: &str, in_use: u32, held_since: Option<u64>) -> Taker {
    Taker::new(holder.into(), true, in_use, 0, held_since)
}

/// A batch (normal) holding the whole limit of 4 with every slot in use.
fn batch_holds_all() -> LimitRow {
    let share = Share { holder: "batch".into(), slots: 4, until_ms: 20_000, ..Share::default() };
    LimitRow { limit: 4, plateau: 4, updated_ms: 1, shares: vec![share], ..LimitRow::default() }
}

fn share<'a>(row: &'a LimitRow, holder: &str) -> &'a Share {
    row.shares.iter().find(|s| s.holder == holder).unwrap()
}

fn ended(holder: &str, in_use: u32) -> Released {
    Released { holder: holder.into(), keeps: true, in_use, ..Default::default() }
}

#[test]
fn a_chat_at_high_waits_registered_and_the_batch_gives_it_the_next_slot_that_frees() {
    let Take::Full { register: Some(waits), .. } = take(&batch_holds_all(), &seat("chat", 0, None), 10, rules(HIGH))
    else {
        panic!("the limit is spent: the chat registers its wait")
    };
    assert_eq!((share(&waits, "chat").rank, share(&waits, "chat").waits_until_ms), (HIGH, 10 + STANDS_MS));
    // One batch call ends: its share shrinks to the 3 still out (not to its fair part, 2).
    let given = release(&waits, &ended("batch", 3), 20, rules(NORMAL)).unwrap();
    assert_eq!(share(&given, "batch").slots, 3);
    // The batch's next item finds the free slot but leaves it; the chat takes it.
    assert!(matches!(take(&given, &seat("batch", 3, Some(20)), 21, rules(NORMAL)), Take::Full { .. }));
    let served = match take(&given, &seat("chat", 0, None), 22, rules(HIGH)) {
        Take::Write { row, .. } => row,
        other => panic!("{other:?}"),
    };
    assert_eq!((share(&served, "chat").slots, share(&served, "chat").wants), (1, false));
    assert_eq!(held(&served, 22), 4, "within the limit");
}

#[test]
fn equal_priorities_share_as_before_a_normal_wait_asks_only_down_to_the_fair_part() {
    let Take::Full { register: Some(waits), .. } =
        take(&batch_holds_all(), &seat("other batch", 0, None), 10, rules(NORMAL))
    else {
        panic!()
    };
    let given = release(&waits, &ended("batch", 3), 20, rules(NORMAL)).unwrap();
    assert_eq!(share(&given, "batch").slots, 3, "only what it does not use");
    let given = release(&given, &ended("batch", 1), 21, rules(NORMAL)).unwrap();
    assert_eq!(share(&given, "batch").slots, 2, "then down to its fair part, not below");
}

#[test]
fn a_lower_priority_holding_unused_slots_gives_them_back_at_its_next_call() {
    let mut row = batch_holds_all();
    row.shares.push(Share {
        holder: "chat".into(),
        slots: 0,
        until_ms: 20_000,
        wants: true,
        rank: HIGH,
        waits_until_ms: 2_000,
        ..Share::default()
    });
    let Take::Full { register: Some(back), .. } = take(&row, &seat("batch", 2, Some(5)), 10, rules(NORMAL)) else {
        panic!("held off: it gives back the two it does not use")
    };
    assert_eq!(share(&back, "batch").slots, 2);
    assert!(matches!(take(&back, &seat("chat", 0, None), 11, rules(HIGH)), Take::Write { .. }));
}

#[test]
fn a_wait_that_lapsed_holds_nobody_off_and_a_worker_kept_waiting_ten_seconds_goes_first() {
    let mut row = batch_holds_all();
    row.shares[0].slots = 3;
    row.shares.push(Share {
        holder: "chat".into(),
        slots: 0,
        until_ms: 20_000,
        wants: true,
        rank: HIGH,
        waits_until_ms: 2_000,
        ..Share::default()
    });
    assert!(matches!(take(&row, &seat("batch", 3, None), 1_000, rules(NORMAL)), Take::Full { .. }));
    assert!(matches!(take(&row, &seat("batch", 3, None), 2_000, rules(NORMAL)), Take::Write { .. }), "lapsed");
    // The chat waits on (its wait renewed); a worker at Low has waited unserved since 0.
    row.shares[1].waits_until_ms = 50_000;
    let low = |now| take(&row, &seat("low", 0, Some(0)), now, rules(LOW));
    assert!(matches!(low(HOLD_MS - 1), Take::Full { .. }), "held off by the chat");
    assert!(matches!(low(HOLD_MS), Take::Write { .. }), "kept waiting 10 s: it waits at High, and goes");
}

#[test]
fn with_room_every_priority_goes_at_once_and_a_high_call_ignores_lower_waits() {
    let mut row = batch_holds_all();
    row.shares[0].slots = 2;
    row.shares[0].wants = true;
    row.shares[0].waits_until_ms = 5_000;
    assert!(matches!(take(&row, &seat("low", 0, None), 1, rules(LOW)), Take::Full { .. }), "a normal waits");
    assert!(matches!(take(&row, &seat("chat", 0, None), 1, rules(HIGH)), Take::Write { .. }));
    let room = LimitRow { shares: Vec::new(), ..batch_holds_all() };
    assert!(matches!(take(&room, &seat("low", 0, None), 1, rules(LOW)), Take::Write { .. }));
}

#[test]
fn a_lower_priority_does_not_grow_the_limit_while_a_higher_one_holds_slots() {
    let mut row = batch_holds_all();
    row.plateau = 0; // slow start: a served round grows it
    let grows = |row: &LimitRow| {
        let t = Taker { served_full: 4, ..seat("batch", 4, None) };
        matches!(take(row, &t, 10, rules(NORMAL)), Take::Write { grew: true, .. })
    };
    assert!(grows(&row), "alone, the batch probes");
    row.shares.push(Share { holder: "chat".into(), slots: 1, until_ms: 20_000, rank: HIGH, ..Share::default() });
    row.limit = 5;
    assert!(!grows(&row), "a chat's call is out: no probe beside it");
}

#[test]
fn get_provider_state_counts_the_workers_waiting_by_priority() {
    use resilient_engine::limits::priority::{waiting, Waiting};
    let Take::Full { register: Some(row), .. } = take(&batch_holds_all(), &seat("chat", 0, None), 10, rules(HIGH))
    else {
        panic!()
    };
    assert_eq!(waiting(&row, 11), Waiting { high: 1, normal: 0, low: 0 });
    assert_eq!(waiting(&row, 20_010), Waiting::default(), "its share's lease ended");
}

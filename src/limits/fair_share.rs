//! A spent fleet limit's fair split (issue 59, *Fair Share Key*): max-min fair by weight between
//! the keys holding a part of it, a key's part split between its holders. Asked by
//! [`crate::limits::fleet_limit`]'s take and release; sans-IO, on the row as read.
use crate::limits::learned_limit::{self, LimitRow, Share, KEY_MARK};
use serde::{Deserialize, Serialize};

/// Who a part of the limit is for in the fair split: a holder, the key it counts under (its
/// own where it has none) and the key's weight.
#[derive(Debug, Clone, Copy)]
pub struct Party<'a> {
    pub holder: &'a str,
    pub key: &'a str,
    pub weight: u32,
}

impl<'a> Party<'a> {
    pub fn of(holder: &'a str, weight: u32) -> Party<'a> {
        Party { holder, key: learned_limit::party(holder), weight: weight.max(1) }
    }
}

/// What one key holds of a provider's fleet limit now: the slots of its holders, whether one of
/// them waits at the spent limit, its weight, and what it is owed ([`owed`], in slot-milliseconds
/// as the row counts it: above 0 it was served below its part, below 0 past it; an integer, as
/// writing a float would cost the WASM engine 3 KB) (Get Provider State's heaviest keys).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyLoad {
    pub key: String,
    pub slots: u32,
    pub waiting: bool,
    pub weight: u32,
    pub owed_ms: i64,
}

/// The keys that hold the most of the limit now, at most `HEAVIEST` (holders without a key are
/// not keys: an earlier version's worker, a guard's call without one).
pub fn heaviest(row: &LimitRow, now: u64) -> Vec<KeyLoad> {
    let mut keys: Vec<KeyLoad> = Vec::new();
    for s in row.shares.iter().filter(|s| s.until_ms > now && s.holder.contains(KEY_MARK)) {
        let key = learned_limit::party(&s.holder);
        match keys.iter_mut().find(|k| k.key == key) {
            Some(k) => (k.slots, k.waiting) = (k.slots + s.slots, k.waiting | s.wants),
            None => keys.push(KeyLoad {
                key: key.into(),
                slots: s.slots,
                waiting: s.wants,
                weight: s.weight.max(1),
                owed_ms: 0,
            }),
        }
    }
    for k in keys.iter_mut() {
        k.owed_ms = (owed(row, &k.key, now) * 1_000.0) as i64;
    }
    // The heaviest first, picked rather than sorted: a sort's code would cost the WASM engine 4 KB.
    let mut heaviest = Vec::new();
    while heaviest.len() < HEAVIEST && !keys.is_empty() {
        let most = (0..keys.len()).fold(0, |m, j| if keys[j].slots > keys[m].slots { j } else { m });
        heaviest.push(keys.swap_remove(most));
    }
    heaviest
}

/// How many keys Get Provider State lists.
pub const HEAVIEST: usize = 5;

/// A holder's fair part of the limit, max-min fair by weight: the limit is split between the
/// keys with a live share (and its own) in proportion to their weights, except that a key
/// holding less than its part and waiting for nothing keeps just what it holds, and what it
/// leaves is split between the others the same way (water-filling, as Kubernetes' API Priority
/// and Fairness allocates); a key's part is split equally between its holders. Without keys
/// every holder is a key of its own at weight 1: an equal part each. 0 when they outnumber the
/// limit (a waiting holder then gets a slot as one frees).
pub fn fair(row: &LimitRow, me: Party, now: u64, limit: u32) -> u32 {
    fair_part(row, me, now, limit) as u32
}

/// [`fair`] before it is rounded down to whole calls. A holder below it by a fraction asks for
/// the next call too (it registers), so two holders of 4.5 each take turns at the fifth slot
/// instead of one keeping it for ever.
pub fn fair_part(row: &LimitRow, me: Party, now: u64, limit: u32) -> f64 {
    let (part, holders, _) = key_part(row, me, now, limit);
    part / holders
}

/// The most a key is owed (or owes), in slot-milliseconds: enough to win the fraction of a call
/// its part has, little enough that a past wait is not a burst now.
const OWED_MAX_MS: f64 = 20_000.0;

/// What `key` is owed now, in slots: what the row counted, and since then its shortfall below its
/// part at the row's holdings (a second at a slot short is a slot). Time below its part counts
/// only while one of its shares waits (nothing is banked by asking for less); time above it counts
/// always, so a key served past its part gives the slot to the one it was taken from (a part of a
/// fraction of a call, 2.25 of 3, is then served over time, not rounded to 2 for ever).
pub fn owed(row: &LimitRow, key: &str, now: u64) -> f64 {
    let since = if row.accrued_ms == 0 { 0 } else { now.saturating_sub(row.accrued_ms) };
    let mut mine = row.shares.iter().filter(|s| s.until_ms > now && learned_limit::party(&s.holder) == key);
    let Some(first) = mine.clone().next() else { return 0.0 };
    let below = shortfall(row, Party::of(&first.holder, first.weight), now, row.limit, first.slots);
    let rate = if below > 0.0 && !mine.any(|s| s.wants) { 0.0 } else { below };
    (first.owed as f64 + rate * since as f64).clamp(-OWED_MAX_MS, OWED_MAX_MS) / 1_000.0
}

/// `next`'s shares with what each key is owed counted until `now` at `before`'s holdings (the
/// row as it stood since it was last counted), once per key and the same on each of its shares.
pub fn accrue(before: &LimitRow, next: &mut LimitRow, now: u64) {
    for k in 0..next.shares.len() {
        let key = learned_limit::party(&next.shares[k].holder);
        let seen = next.shares[..k].iter().find(|s| learned_limit::party(&s.holder) == key);
        next.shares[k].owed = match seen {
            Some(s) => s.owed,
            None => (1_000.0 * owed(before, key, now)) as i64,
        };
    }
    next.accrued_ms = now;
}

/// How far `me`'s key is below its part when `me` holds `held` (what its key's other holders
/// hold counted too): a free slot goes to the waiter whose key is furthest below, so a key of
/// many holders, each a fraction of a call, holds its part between them and no more.
pub fn shortfall(row: &LimitRow, me: Party, now: u64, limit: u32, held: u32) -> f64 {
    let (part, _, others) = key_part(row, me, now, limit);
    part - others - f64::from(held)
}

/// `me`'s key's part of the limit, its holders (`me` among them) and what the others hold.
#[inline(never)]
fn key_part(row: &LimitRow, me: Party, now: u64, limit: u32) -> (f64, f64, f64) {
    // No list of keys is built (the engine's WASM is smaller for it). A share of a holder with
    // no key is a key of its own (a holder has one share); a keyed one is read at its key's first
    // live share, with what the key's holders hold and whether one waits. Cheap where it is hot:
    // one pass over the shares per level, a scan per other key only where holders carry keys.
    let other = |s: &Share| s.until_ms > now && s.holder != me.holder;
    let shares = &row.shares;
    let (mut holders, mut others) = (1.0, 0.0);
    for s in shares.iter().filter(|s| other(s) && learned_limit::party(&s.holder) == me.key) {
        holders += 1.0;
        others += f64::from(s.slots);
    }
    let standing = |k: usize, s: &Share| -> Option<(f64, bool)> {
        let key = learned_limit::party(&s.holder);
        if !other(s) || key == me.key {
            return None;
        }
        if key.len() == s.holder.len() {
            return Some((f64::from(s.slots), s.wants));
        }
        let mut held = (0.0, false);
        for (j, t) in shares.iter().enumerate() {
            if other(t) && learned_limit::party(&t.holder) == key {
                if j < k {
                    return None;
                }
                held = (held.0 + f64::from(t.slots), held.1 | t.wants);
            }
        }
        Some(held)
    };
    // Water-filling: at each level the keys below their part and waiting for nothing keep what
    // they hold, the rest split what is left by weight; the level rises until it settles.
    let mut level = 0.0;
    loop {
        let (mut left, mut weights) = (f64::from(limit), f64::from(me.weight));
        for (k, s) in shares.iter().enumerate() {
            let Some((held, wants)) = standing(k, s) else { continue };
            let weight = f64::from(s.weight.max(1));
            match !wants && held < level * weight {
                true => left -= held,
                false => weights += weight,
            }
        }
        let next = left / weights;
        if next <= level {
            return ((level * f64::from(me.weight)).max(0.0), holders, others);
        }
        level = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_below_its_part_while_it_waits_is_owed_and_one_above_it_owes_so_a_part_of_two_and_a_quarter_is_served_over_time(
    ) {
        // A limit of 3 between a (weight 3, a part of 2.25) and b (weight 1, 0.75): a holds 2, b 1.
        let share = |key: &str, slots: u32, wants: bool| Share {
            holder: learned_limit::keyed(format!("w-{key}"), key),
            slots,
            wants,
            until_ms: 100_000,
            weight: if key == "a" { 3 } else { 1 },
            ..Default::default()
        };
        let row = |a_wants: bool| LimitRow {
            limit: 3,
            shares: vec![share("a", 2, a_wants), share("b", 1, true)],
            accrued_ms: 1_000,
            ..Default::default()
        };
        let mut next = row(true);
        accrue(&row(true), &mut next, 3_000);
        // Two seconds a quarter of a slot below (a) and above (b) its part.
        assert_eq!([next.shares[0].owed, next.shares[1].owed], [500, -500]);
        assert!((owed(&next, "a", 3_000) - 0.5).abs() < 1e-9);
        // Get Provider State says so.
        let owes: Vec<(String, i64)> = heaviest(&next, 3_000).into_iter().map(|k| (k.key, k.owed_ms)).collect();
        assert_eq!(owes, [("a".into(), 500), ("b".into(), -500)]);
        // At the next freed slot a, with what it is owed, is as far below as b with 0 held.
        let below = |key: &str, held| {
            let s = &next.shares[usize::from(key == "b")];
            shortfall(&next, Party::of(&s.holder, s.weight), 3_000, 3, held) + owed(&next, key, 3_000)
        };
        assert!((below("a", 2) - 0.75).abs() < 1e-9 && (below("b", 0) - 0.25).abs() < 1e-9);
        // a asking for nothing more banks nothing, and b's part is then what a leaves: b owes
        // nothing either (max-min).
        let mut idle = row(false);
        accrue(&row(false), &mut idle, 3_000);
        assert_eq!([idle.shares[0].owed, idle.shares[1].owed], [0, 0]);
    }

    #[test]
    fn the_heaviest_keys_sum_their_holders_and_leave_out_the_unkeyed_and_the_lapsed() {
        let share = |holder: &str, key: &str, slots: u32, wants: bool, until_ms: u64| Share {
            holder: learned_limit::keyed(holder.into(), key),
            slots,
            wants,
            until_ms,
            weight: if key == "a" { 3 } else { 1 },
            ..Default::default()
        };
        let row = LimitRow {
            shares: vec![
                share("w1", "b", 2, false, 100),
                share("w2", "a", 3, false, 100),
                share("w3", "a", 1, true, 100),
                share("w4", "", 5, false, 100),
                share("w5", "c", 9, false, 10),
            ],
            ..Default::default()
        };
        let load = |key: &str, slots, waiting, weight| KeyLoad { key: key.into(), slots, waiting, weight, owed_ms: 0 };
        assert_eq!(heaviest(&row, 50), vec![load("a", 4, true, 3), load("b", 2, false, 1)]);
        let many = LimitRow {
            shares: (0..8).map(|k| share(&format!("w{k}"), &format!("k{k}"), k, false, 100)).collect(),
            ..Default::default()
        };
        let keys: Vec<String> = heaviest(&many, 50).into_iter().map(|k| k.key).collect();
        assert_eq!(keys, ["k7", "k6", "k5", "k4", "k3"]);
    }
}

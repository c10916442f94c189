//! Fallback-chain choice: given the ordered chain, each provider's shared state and what this
//! item already learned, which provider to call now, which to skip and why, or how long until
//! one is admissible again.
use crate::admit::{self, Ask, Held, InPool, Refusal};
use crate::config::Chain;
use crate::limits::fleet_limit::Taker;
use crate::verdict::reason::Reason;
// Where the chain's callers have always found them.
pub use crate::admit::Local;
pub use crate::choose::skip::Skip;
pub use crate::rows::{ProviderView, Writes};

#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    /// Call `provider`, holding what every limit reserved for the call (its rows written with
    /// it, what it carries to its end).
    Call { provider: usize, held: Held },
    /// The execution's window for this provider is full: wait in its line, nothing written.
    Queue { provider: usize },
    /// A gate slot reserved at `at_ms` on this provider: sleep, then call it.
    Reserve { provider: usize, at_ms: u64, writes: Writes },
    /// Nothing admissible; `earliest` = when and why the soonest provider could be tried again.
    Nothing {
        earliest: Option<(u64, Reason)>,
        all_permanent: bool,
        /// Where the fleet's limit is spent: the row telling the others this worker waits.
        register: Option<Writes>,
        /// The provider whose fleet limit the item waits its turn at, in its execution's pool
        /// (woken as a call of the execution ends).
        turn: Option<usize>,
    },
}

/// The first admissible provider in `order` (the item's route: every provider once).
/// `takers[i]`: who takes a slot of provider i's fleet limit (where the chain bounds it);
/// `pool`: the item's place in its execution's windows, where it asks them.
#[allow(clippy::too_many_arguments)]
pub fn choose(
    chain: &Chain,
    order: &[usize],
    views: &[ProviderView],
    local: &[Local],
    takers: &[Taker],
    now: u64,
    holder: &str,
    max_wait_ms: u64,
    pool: Option<&InPool>,
    skips: &mut Vec<Skip>,
) -> Choice {
    let mut register = None;
    let mut earliest: Option<(u64, Reason)> = None;
    let mut all_permanent = true;
    let mut note = |skip: Skip, earliest: &mut Option<(u64, Reason)>, skips: &mut Vec<Skip>| {
        if skip.reason.is_retryable() {
            all_permanent = false;
            if earliest.is_none_or(|(t, _)| skip.until_ms < t) {
                *earliest = Some((skip.until_ms, skip.reason));
            }
        }
        match skips.iter_mut().find(|s| s.provider == skip.provider) {
            Some(s) => *s = skip,
            None => skips.push(skip),
        }
    };
    // A gate slot reserved for later here, while the item holds one due now further down.
    let mut later = None;
    for (k, &i) in order.iter().enumerate() {
        if let Some((reason, until_ms)) = local[i].done {
            note(Skip { provider: i, reason, until_ms }, &mut earliest, skips);
            continue;
        }
        let ask = Ask {
            chain,
            provider: i,
            view: &views[i],
            local: &local[i],
            taker: takers.get(i),
            now,
            holder,
            max_wait_ms,
            pool,
        };
        match admit::reserve(&ask) {
            Ok(held) => return Choice::Call { provider: i, held },
            Err(Refusal::Queue) => return Choice::Queue { provider: i },
            Err(Refusal::Later { at_ms, writes }) => {
                // Woken for a slot further down the chain (reserved where this provider turned
                // it away): taken now if it can go, rather than a later slot here (reserving
                // here again, and turned away here again at its time, it would never call).
                let due_after = order[k + 1..].iter().any(|&j| local[j].reserved_at_ms.is_some_and(|at| at <= now));
                if !due_after {
                    return Choice::Reserve { provider: i, at_ms, writes };
                }
                later.get_or_insert(Choice::Reserve { provider: i, at_ms, writes });
            }
            Err(Refusal::Skip { reason, until_ms, register: row, wait_here }) => {
                note(Skip { provider: i, reason, until_ms }, &mut earliest, skips);
                if register.is_none() {
                    register = row;
                }
                if wait_here {
                    // Waiting at the fleet's limit: in turn among the execution's items there.
                    let turn = pool.filter(|_| reason == Reason::ConcurrencyLimit).map(|p| {
                        p.pool.borrow_mut().fleet_turn(i, p.member, local[i].retry, now, false);
                        i
                    });
                    let wait =
                        Choice::Nothing { earliest: Some((until_ms, reason)), all_permanent: false, register, turn };
                    return later.unwrap_or(wait);
                }
            }
        }
    }
    later.unwrap_or(Choice::Nothing { earliest, all_permanent, register, turn: None })
}

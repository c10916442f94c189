//! What an item's calls hold in memory and give back: their slots of the execution's window
//! (Item Concurrency *Auto*), their count at the worker's seat of the fleet's limit, their token
//! reservation and spend hold, settled or released when each call ends.
use super::*;
use crate::limits::concurrency::FirstByte;

impl ItemMachine {
    /// What this item's request is to every provider of its chain (its input's size, the output
    /// it asks for at most): what its calls reserve of a provider's tokens per minute.
    pub fn tokens(&mut self, facts: TokenFacts) {
        self.token_facts = vec![Some(facts); self.chain.providers.len()];
    }

    /// The item waits in line: each provider this poll skipped for its tokens per minute or its
    /// spend cap counts a token wait (the skips themselves are dropped with the wait).
    pub(super) fn count_token_waits(&mut self, skipped_before: usize) {
        self.token_waits.resize(self.chain.providers.len(), 0);
        for s in &self.report.skipped[skipped_before..] {
            self.token_waits[s.provider] += matches!(s.reason, Reason::TokenLimited | Reason::SpendCap) as u32;
        }
    }

    /// What this item's request is to `provider` alone (its own body and Max Tokens). A provider
    /// out of the chain's range is ignored.
    pub fn provider_tokens(&mut self, provider: usize, facts: TokenFacts) {
        if provider < self.chain.providers.len() {
            self.token_facts.resize(self.chain.providers.len(), None);
            self.token_facts[provider] = Some(facts);
        }
    }

    /// A call's reservation settled with what it used: `usage` as its answer reported, or none
    /// (`refused`: the vendor answered with a status and processed nothing); `headers`: the
    /// answer's, where the vendor says what is left of its minutes (read only here: a call that
    /// reserved nothing never parses them). `None` where the call reserved nothing.
    pub(super) fn settle_tokens(
        &self,
        provider: usize,
        reservation: Option<Reservation>,
        usage: Option<&Usage>,
        refused: bool,
        headers: Option<&HintHeaders>,
        now: u64,
    ) -> Option<Settle> {
        let rules = self.chain.providers[provider].tokens.as_ref()?;
        let reservation = reservation?;
        let used = token_limit::used(rules, &reservation, usage, refused);
        let remaining = headers.map(|h| token_limit::remaining(h, now)).unwrap_or_default();
        Some(Settle { reservation, used, remaining })
    }

    /// The fleet's learned limit: this item's calls are made within its worker's `seats`.
    pub fn seat(&mut self, seats: Rc<RefCell<Seats>>) {
        self.seats = Some(seats);
    }

    /// The shared store failed: the rows from now on are this process's memory.
    pub fn on_memory(&mut self) {
        self.on_memory = true;
    }

    /// Who takes each provider's next slot of the fleet's limit (none where it is not bounded).
    pub(super) fn takers(&self, holder: &str) -> Vec<Taker> {
        if !self.chain.fleet_limit {
            return Vec::new();
        }
        match &self.seats {
            Some(seats) => {
                let seats = seats.borrow();
                let start = |i: usize| self.chain.providers[i].breaker.threshold;
                (0..self.chain.providers.len()).map(|i| seats.taker(i, self.on_memory, start(i))).collect()
            }
            None => {
                let weight = self.chain.share_weight;
                let call = Taker { weight, ..Taker::new(self.keyed_holder(holder), false, 0, 0, None) };
                vec![call; self.chain.providers.len()]
            }
        }
    }

    /// A guard's call's name at the fleet's limit: its holder's, under its chain's fair-share key
    /// as a seat's name is.
    fn keyed_holder(&self, holder: &str) -> String {
        crate::limits::learned_limit::keyed(holder.to_string(), &self.chain.share_key)
    }

    /// A call holding a fleet slot ended: the seat counts it, and the row hears what it says.
    pub(super) fn leave_seat(&mut self, holder: &str, sent_ms: u64, provider: usize, signal: Signal) -> Released {
        let (holder, keeps, in_use, heard) = match &self.seats {
            Some(seats) => {
                let mut seats = seats.borrow_mut();
                let heard = seats.seats[provider].end(signal);
                (seats.holder.clone(), true, seats.seats[provider].in_use, heard)
            }
            None => (self.keyed_holder(holder), false, 0, FirstByte::default()),
        };
        Released::new(holder, keeps, in_use, matches!(signal, Signal::Congested { .. }), heard, sent_ms)
    }

    /// Item Concurrency *Auto*: this item's calls go through the execution's windows (`pool`):
    /// a call to a provider whose window is full waits in line ([`Step::Queue`]).
    pub fn join(&mut self, pool: Rc<RefCell<Pool>>) {
        self.member = pool.borrow_mut().join();
        self.pool = Some(pool);
    }

    /// Its number in the pool (a wake names the items to poll again by it).
    pub fn member(&self) -> u32 {
        self.member
    }

    /// The items of the pool to poll again after this item's last decision or outcome: slots of
    /// a window were granted to them (or it refuses all).
    pub fn take_wake(&mut self) -> Vec<u32> {
        self.pool.as_ref().map(|p| p.borrow_mut().take_woken()).unwrap_or_default()
    }

    /// Each provider's window now, if the item is in a pool (for its run data).
    pub fn windows(&self) -> Option<Vec<u32>> {
        self.pool.as_ref().map(|p| p.borrow().limits())
    }

    /// Give a call's window slot back with what its outcome said; the items in line to wake.
    /// Returns what it taught the window (none without a slot).
    pub(super) fn release_slot(&mut self, provider: usize, round: Option<u32>, signal: Signal) -> Option<WindowNews> {
        match (round, &self.pool) {
            (Some(round), Some(pool)) => Some(pool.borrow_mut().release(provider, round, signal)),
            _ => None,
        }
    }

    /// What the admitted call reserved at its check (its tokens, its spend hold), settled with
    /// its outcome at the usage reported.
    pub fn holding(&mut self, reserved: Option<Reservation>) {
        if let (Some(p), Some(r)) = (self.pending.first_mut(), reserved) {
            p.tokens = Some(r);
        }
    }

    /// What the call out to `provider` reserved of its tokens and spend cap (a guard's ticket
    /// carries it to its report).
    pub fn reserved(&self, provider: usize) -> Option<Reservation> {
        self.pending.iter().rev().find(|p| p.provider == provider).and_then(|p| p.tokens)
    }

    /// Calls handed out whose write lost its race were never made: their window slots go back.
    pub(super) fn drop_uncommitted(&mut self) {
        let (kept, dropped): (Vec<Pending>, Vec<Pending>) = self.pending.drain(..).partition(|p| p.committed);
        self.pending = kept;
        self.called &= !(self.pending.is_empty() && self.report.attempts.is_empty());
        for p in dropped {
            self.give_back(&p);
        }
    }

    /// A call that will report no outcome gives back what it holds in memory: its slot of the
    /// execution's window and its count at this worker's seat (its rows' leases lapse).
    pub(super) fn give_back(&mut self, p: &Pending) {
        self.release_slot(p.provider, p.window_round, Signal::Neutral);
        if let (true, Some(seats)) = (p.seat, &self.seats) {
            seats.borrow_mut().seats[p.provider].end(Signal::Neutral);
        }
    }
}

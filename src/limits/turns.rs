//! A line of items waiting their turn (an execution's window, the fleet's limit): in the order
//! they came, except that a retry (its budget runs: it met a 429, a failure) waits after the
//! retries already in line and before every first call (its budget waits with it), so it does
//! not wait its budget out behind the whole batch again.

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turns {
    ids: Vec<u32>,
    /// How many at the head are retries.
    retries: usize,
}

impl Turns {
    /// Item `id` takes its place in line, unless it has one.
    pub fn enter(&mut self, id: u32, retry: bool) {
        if !self.ids.contains(&id) {
            let at = if retry { self.retries } else { self.ids.len() };
            self.ids.insert(at, id);
            self.retries += usize::from(retry);
        }
    }

    pub fn first(&self) -> Option<u32> {
        self.ids.first().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The first in line leaves it (its turn came).
    pub fn take_first(&mut self) -> Option<u32> {
        (!self.ids.is_empty()).then(|| {
            self.retries = self.retries.saturating_sub(1);
            self.ids.remove(0)
        })
    }

    /// Item `id` leaves the line wherever it is.
    pub fn leave(&mut self, id: u32) {
        if let Some(k) = self.ids.iter().position(|&q| q == id) {
            self.ids.remove(k);
            self.retries -= usize::from(k < self.retries);
        }
    }

    /// Everyone leaves the line, into `woken`.
    pub fn wake_all(&mut self, woken: &mut Vec<u32>) {
        woken.append(&mut self.ids);
        self.retries = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_waits_after_the_retries_and_before_every_first_call() {
        let mut t = Turns::default();
        for (id, retry) in [(1, false), (2, false), (3, true), (1, true), (4, true)] {
            t.enter(id, retry);
        }
        t.leave(3);
        t.enter(5, true);
        let order: Vec<u32> = std::iter::from_fn(|| t.take_first()).collect();
        assert_eq!(order, vec![4, 5, 1, 2], "1 kept its place; 3 left");
    }
}

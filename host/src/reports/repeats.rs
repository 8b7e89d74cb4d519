//! The run's repeats: a text seen before is counted, not kept again, so
//! a listener failing every tick is one item with a count. What is
//! remembered is bounded ([`MAX_SEEN`], [`MAX_SEEN_BYTES`]); past it new
//! texts are kept each time.

use std::collections::HashMap;

/// Distinct texts remembered for the run's repeat count.
pub const MAX_SEEN: usize = 1 << 16;
/// Bytes of text remembered for the run's repeat count.
pub const MAX_SEEN_BYTES: usize = 16 << 20;

use super::trim::first_line_of;

/// Every text kept in this run: when it first occurred (its order) and
/// how many times it occurred.
#[derive(Default)]
pub(crate) struct Seen {
    times: HashMap<String, (usize, usize)>,
    bytes: usize,
}

impl Seen {
    /// Counts `text`; whether it occurred before.
    pub(crate) fn again(&mut self, text: &str) -> bool {
        if let Some((_, times)) = self.times.get_mut(text) {
            *times += 1;
            return true;
        }
        if self.times.len() < MAX_SEEN && self.bytes + text.len() <= MAX_SEEN_BYTES {
            self.bytes += text.len();
            let order = self.times.len();
            self.times.insert(text.to_owned(), (order, 1));
        }
        false
    }

    /// How many times `text` occurred (0: not remembered).
    pub(crate) fn times(&self, text: &str) -> usize {
        self.times.get(text).map_or(0, |&(_, times)| times)
    }

    /// The texts that occurred more than once, as their first line and
    /// how many times, in the order they first occurred.
    pub(crate) fn repeats(&self) -> Vec<(String, usize)> {
        let mut repeated: Vec<_> = self
            .times
            .iter()
            .filter(|&(_, &(_, times))| times > 1)
            .map(|(text, &(order, times))| (order, first_line_of(text).to_owned(), times))
            .collect();
        repeated.sort_unstable_by_key(|&(order, ..)| order);
        repeated
            .into_iter()
            .map(|(_, line, times)| (line, times))
            .collect()
    }
}

//! Wall time for a benchmark and its baseline on a machine that stalls:
//! the two measured in turn, in short batches, many times, and each
//! one's fastest batches kept.
//!
//! Why: on a shared virtual machine a measurement of a few seconds meets
//! pauses (another guest, the host's timer) that lengthen it at random,
//! and two criterion runs of the same binary minutes apart can differ by
//! half. A stall only ever adds time. So each side is timed over a batch
//! short enough to often run whole between stalls (well under a
//! millisecond), the sides take turns batch by batch (both see the same
//! machine at almost the same moment), and each side's low quantile is
//! kept: what a batch costs when nothing else got in. The ratio of two
//! such figures is what the benchmark's goal is read against, beside
//! criterion's medians.

use std::time::Duration;

/// One side: a name and a batch to time (it returns how long its timed
/// part took).
pub struct Side<'a> {
    pub name: &'a str,
    pub batch: Box<dyn FnMut() -> Duration + 'a>,
}

impl<'a> Side<'a> {
    pub fn new(name: &'a str, batch: impl FnMut() -> Duration + 'a) -> Self {
        Side {
            name,
            batch: Box::new(batch),
        }
    }
}

/// What [`interleave`] measured of one side: per batch, its fastest and
/// its 10th percentile.
#[derive(Debug, Clone)]
pub struct Fastest {
    pub name: String,
    pub min: Duration,
    pub p10: Duration,
}

/// The rounds asked for by the environment variable `var` (a bench's
/// `GANTRY_BENCH_…_INTERLEAVE=ROUNDS`), if it is set to a number.
pub fn rounds(var: &str) -> Option<usize> {
    std::env::var(var).ok().and_then(|n| n.parse().ok())
}

/// Times each side's batch `rounds` times, in turn (the first side first
/// in even rounds, last in odd ones, so neither always follows the
/// other), after one untimed batch each.
pub fn interleave(rounds: usize, sides: &mut [Side<'_>]) -> Vec<Fastest> {
    for side in sides.iter_mut() {
        (side.batch)();
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(rounds); sides.len()];
    let n = sides.len();
    for round in 0..rounds {
        for k in 0..n {
            let i = if round % 2 == 0 { k } else { n - 1 - k };
            times[i].push((sides[i].batch)());
        }
    }
    sides
        .iter()
        .zip(times)
        .map(|(side, mut t)| {
            t.sort_unstable();
            Fastest {
                name: side.name.to_owned(),
                min: t.first().copied().unwrap_or_default(),
                p10: t.get(t.len() / 10).copied().unwrap_or_default(),
            }
        })
        .collect()
}

/// Prints each side's fastest and 10th-percentile batch per `per_batch`
/// operations, and each side's ratio to the first (the baseline).
pub fn print(title: &str, per_batch: u64, results: &[Fastest]) {
    let per = |d: Duration| d.as_secs_f64() * 1e9 / per_batch as f64;
    println!("{title}: per operation, fastest and 10th percentile of the interleaved batches");
    let Some(base) = results.first() else {
        return;
    };
    for r in results {
        println!(
            "  {:<28} min {:>10.1} ns  p10 {:>10.1} ns  ÷ {}: min {:.3}  p10 {:.3}",
            r.name,
            per(r.min),
            per(r.p10),
            base.name,
            per(r.min) / per(base.min),
            per(r.p10) / per(base.p10),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fastest_batch_of_each_side_is_kept_whatever_the_stalls() {
        let mut a = [5u64, 1, 9, 3].into_iter().cycle();
        let mut b = [20u64, 2, 30, 40].into_iter().cycle();
        let results = interleave(
            8,
            &mut [
                Side::new("a", move || Duration::from_micros(a.next().unwrap())),
                Side::new("b", move || Duration::from_micros(b.next().unwrap())),
            ],
        );
        assert_eq!(results[0].name, "a");
        assert_eq!(results[0].min, Duration::from_micros(1));
        assert_eq!(results[1].min, Duration::from_micros(2));
    }

    #[test]
    fn the_sides_take_turns_starting_from_alternate_ends() {
        let order = std::cell::RefCell::new(Vec::new());
        interleave(
            2,
            &mut [
                Side::new("a", || {
                    order.borrow_mut().push('a');
                    Duration::ZERO
                }),
                Side::new("b", || {
                    order.borrow_mut().push('b');
                    Duration::ZERO
                }),
            ],
        );
        assert_eq!(order.into_inner(), vec!['a', 'b', 'a', 'b', 'b', 'a']);
    }
}

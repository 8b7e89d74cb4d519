//! `gantry run`'s error printer under a flood: a mod's N refused sends with
//! distinct reports in one tick, then the top-level error that carries the
//! last of them (printed once, as its report), beside the linear baseline
//! of formatting the same lines into a String, at N = 10,000 and 40,000 (a
//! linear printer costs four times as much at four times N; the old one,
//! every error against every report, took 45 s at 40,000). The printer
//! lives in the binary crate; it is included here by path (it uses std
//! only).

use std::cell::RefCell;
use std::fmt::Write as _;
use std::hint::black_box;
use std::rc::Rc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

#[allow(dead_code)]
#[path = "../src/error_printer.rs"]
mod error_printer;

use error_printer::ErrorPrinter;

fn reports(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("mods/spam.lua:3: `Spam.K{i}` argument 1: expected int, got string; dispatch aborted"))
        .collect()
}

fn flood(c: &mut Criterion) {
    let mut group = c.benchmark_group("report_printer");
    group.sample_size(10);
    for n in [10_000, 40_000] {
        let reports = reports(n);
        let top_level = format!(
            "{}\nstack traceback:\n\t[C]: in ?\n\tmods/spam.lua:3: in main chunk",
            reports[n - 1]
        );
        group.bench_function(format!("{n} distinct reports, printed once each"), |b| {
            b.iter_batched(
                || reports.clone(),
                |reports| {
                    let out = Rc::new(RefCell::new(String::new()));
                    let sink = out.clone();
                    let printer = ErrorPrinter::new(move |e| {
                        let _ = writeln!(sink.borrow_mut(), "error: {e}");
                    });
                    for report in reports {
                        printer.report(report);
                    }
                    printer.print(&top_level);
                    printer.end_of_step();
                    assert_eq!(printer.count(), n);
                    black_box(out.borrow().len())
                },
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("baseline: the same {n} lines formatted"), |b| {
            b.iter_batched(
                || reports.clone(),
                |reports| {
                    let mut out = String::new();
                    for report in reports {
                        let _ = writeln!(out, "error: {report}");
                    }
                    black_box(out.len())
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, flood);
criterion_main!(benches);

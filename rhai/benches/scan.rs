//! How long the scanner and the rewriter take on a 10,000-line script, next
//! to rhai's own work on the same text in the same run: a plain
//! `Engine::lex` pass (the floor for anything built on its tokenizer) and a
//! full `Engine::compile` (what loading costs anyway).

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use rhai::{Engine, Token};

/// A gameplay-like script: functions, listens with closures, sends with
/// literal and computed keys, maps, arrays, comments and strings.
fn script(lines: usize) -> String {
    let mut out = String::with_capacity(lines * 48);
    let mut i = 0usize;
    let mut written = 0usize;
    while written < lines {
        out.push_str(&format!(
            "// block {i}: NotifyMessage(\"In.Comment\") is not a call\n\
             fn on_hit_{i}(dmg, causer) {{\n\
             \x20   let total = dmg * 2 + {i};\n\
             \x20   NotifyObjectMessage(causer, \"Player.Hurt{m}\", total, #{{ crit: true }});\n\
             \x20   if total > 10 {{ NotifyMessage(\"Score.Add\", [total, {i}]); }}\n\
             \x20   total\n\
             }}\n\
             ListenObjectMessage(self, \"Enemy.Hit{m}\", self, |dmg, causer| {{\n\
             \x20   let key = \"Dyn.\" + dmg;\n\
             \x20   NotifyMessage(key, dmg, 1.5, \"text with NotifyMessage(x)\");\n\
             }});\n",
            m = i % 50
        ));
        written += 11;
        i += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let src = script(10_000);
    let lines = src.lines().count();
    let engine = Engine::new_raw();
    let mut group = c.benchmark_group(format!("rhai_{lines}_lines"));
    group.sample_size(20);

    group.bench_function("baseline_engine_lex", |b| {
        b.iter(|| {
            let input = [black_box(src.as_str())];
            let (tokens, _) = engine.lex(&input);
            let mut n = 0usize;
            for (token, _) in tokens {
                if token == Token::EOF {
                    break;
                }
                n += 1;
            }
            n
        })
    });
    group.bench_function("scan", |b| {
        b.iter(|| gantry_rhai::syntax::scan(black_box(&src)).len())
    });
    group.bench_function("baseline_engine_compile", |b| {
        b.iter(|| engine.compile(black_box(&src)).is_ok())
    });
    group.bench_function("rewrite", |b| {
        b.iter(|| gantry_rhai::syntax::rewrite(black_box(&src)).bakes.len())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

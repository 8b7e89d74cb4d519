//! Load-time rewrite cost on a generated 10,000-line script (budget: 50 ms).
//!
//! Baseline in the same run: a bare tree-sitter parse of the same text, which
//! the rewrite cannot go below; then parse + scan, then the full rewrite.

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use gantry_lua::syntax::{parse, rewrite, scan_tree};

/// A mod-like script: handlers, sends with literal and computed keys,
/// comments, strings, tables and shadowing, repeated to at least `lines`
/// lines (10,010 for 10,000).
fn script(lines: usize) -> String {
    let mut s = String::with_capacity(lines * 48);
    let mut i = 0;
    while s.lines().count() < lines {
        // Lua allows 200 chunk-level locals: one handler in five is local.
        let local = if i % 5 == 0 { "local " } else { "" };
        s.push_str(&format!(
            r#"-- handler {i}: reacts to damage and notifies the UI
{local}function on_hurt_{i}(dmg, causer)
    local msg = "took " .. tostring(dmg) .. " from NotifyMessage('x')"
    if dmg > {i} then
        NotifyObjectMessage(self, "Player.Hurt{m}", dmg, causer)
    else
        GMP.NotifyMessage("Ui.Flash.N{m}", {{ color = "red", alpha = 0.5 }})
    end
    NotifyMessage(key_{i}, dmg)
    return msg
end
ListenObjectMessage(self, "Player.Hurt{m}", self, function(dmg, causer)
    on_hurt_{i}(dmg, causer)
end, {{ times = -1, order = {i} }})
"#,
            m = i % 97
        ));
        i += 1;
    }
    // Whole blocks only: a script cut mid-block has a syntax error, which
    // the rewriter leaves for Lua to report after the parse alone.
    s
}

fn bench(c: &mut Criterion) {
    let source = script(10_000);
    let tree = parse(&source, None).expect("parses");
    assert!(
        !tree.root_node().has_error(),
        "the bench script is valid Lua"
    );
    assert!(rewrite(&source).is_rewritten());
    let mut group = c.benchmark_group("rewrite_10k_lines");
    group.sample_size(30);
    group.bench_function("baseline_tree_sitter_parse", |b| {
        b.iter(|| parse(black_box(&source), None))
    });
    group.bench_function("parse_and_scan", |b| {
        b.iter(|| {
            let tree = parse(black_box(&source), None).expect("parses");
            scan_tree(&tree, &source)
        })
    });
    group.bench_function("rewrite", |b| b.iter(|| rewrite(black_box(&source))));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

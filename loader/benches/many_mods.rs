//! Loading a game of 100 mods of 10 scripts each, beside the single-folder
//! load of the same 1,000 scripts in the same run: what a mod costs on
//! top of its scripts (its manifest, its place in the order, its own
//! runtime). The target: the game loads in under a second in release.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use gantry_loader::{Game, Options, TableChoice};

const MODS: usize = 100;
const SCRIPTS: usize = 10;

/// One script: a listener and a store, as a small mod's script has.
fn script(m: usize, s: usize) -> String {
    format!(
        "local count = 0\n\
         ListenMessage(\"Mod{m}.Ping\", nil, function(n) count = count + n end)\n\
         ListenMessage(\"Game.Tick\", nil, function(n) if n == 1 then NotifyMessage(\"Mod{m}.Ping\", {s}) end end)\n"
    )
}

/// `root/mods/m000..m099`, each depending on the one before.
fn game_folder(root: &Path) {
    for m in 0..MODS {
        let dir = root.join("mods").join(format!("m{m:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        let depends = if m == 0 {
            String::new()
        } else {
            format!("depends = [\"m{:03} >= 1.0\"]\n", m - 1)
        };
        std::fs::write(
            dir.join("mod.toml"),
            format!("[mod]\nname = \"m{m:03}\"\nversion = \"1.0.0\"\n{depends}"),
        )
        .unwrap();
        for s in 0..SCRIPTS {
            std::fs::write(dir.join(format!("s{s}.lua")), script(m, s)).unwrap();
        }
    }
}

/// The same 1,000 scripts in one folder.
fn single_folder(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    for m in 0..MODS {
        for s in 0..SCRIPTS {
            std::fs::write(root.join(format!("m{m:03}_s{s}.lua")), script(m, s)).unwrap();
        }
    }
}

fn load(dir: &Path) {
    let options = Options {
        table: TableChoice::Off,
        ..Options::default()
    };
    let mut game = Game::open(dir, options).expect("the game opens");
    game.load();
    game.tick(1.0 / 60.0);
    assert!(!game.failed(), "every script loads");
}

fn bench(c: &mut Criterion) {
    let game = tempfile::tempdir().unwrap();
    game_folder(game.path());
    let single = tempfile::tempdir().unwrap();
    single_folder(single.path());
    let mut group = c.benchmark_group("load_1000_scripts");
    group.sample_size(10);
    group.bench_function("100_mods_of_10", |b| b.iter(|| load(game.path())));
    group.bench_function("one_folder", |b| b.iter(|| load(single.path())));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

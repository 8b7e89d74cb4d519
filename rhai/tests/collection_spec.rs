//! Collections from Rhai, audited against references `001_…`/`004_…` and
//! issue 4: the send (transient) path from a script, and a writer length
//! no table can hold (an error, never a crash).

mod common;

use common::Fixture;
use gantry_host::{Key, Source};
use gantry_rhai::runtime::RhaiOptions;

fn fixture() -> (Fixture, Key) {
    common::inventory(RhaiOptions::default())
}

fn fixture_with(options: RhaiOptions) -> (Fixture, Key) {
    common::inventory(options)
}

#[test]
fn transient_send_reaches_all_rows_listeners_only_as_a_full_reload_and_keeps_nothing() {
    let (f, key) = fixture();
    let (_, obj) = f.load(
        "radar.rhai",
        r#"
        fn on_all(row, item, u) {
            print(`all ${row}:${item.id} of ${u.total} reload=${u.full_reload}`);
        }
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, Fn("on_all"));
        ListenRowMessage(SELF, "Inv.Items", (), 1, |row, item| print(`slot ${row}`));
        ListenRowMessage(SELF, "Inv.Items", (), GMP::WithRemoval(0), |row, item| print(`slot~ ${row}`));
        NotifyObjectMessage(SELF, "Inv.Items", [
            #{ __struct: "Item", id: 7, name: "a", count: 1 },
            #{ __struct: "Item", id: 8, name: "b", count: 2 },
        ]);
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`late ${row}`));
        "#,
    );
    assert_eq!(
        f.printed(),
        ["all 0:7 of 2 reload=true", "all 1:8 of 2 reload=true"],
        "slot listeners never fire on a send, and a late listener gets nothing"
    );
    assert!(f.hub.stored(key, Source::Object(obj)).is_none());
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

const GROW: &str = r#"
StoreObjectMessage(SELF, "Inv.Items", [#{ __struct: "Item", id: 1, name: "a", count: 1 }]);
fn grow(n) { let items = GMP::StoredArray(This(), "Inv.Items"); items.SetNum(n); }
fn count() { let items = GMP::StoredArray(This(), "Inv.Items"); items.Num() }
"#;

#[test]
fn set_num_past_what_a_table_can_hold_is_an_error_not_a_crash() {
    let (f, _key) = fixture_with(RhaiOptions {
        max_array_size: 0,
        ..RhaiOptions::default()
    });
    let (id, _obj) = f.load("inv.rhai", GROW);
    for n in [1_i64 << 40, 1 << 62, i64::MAX] {
        let err =
            f.rt.call(id, "grow", vec![rhai::Dynamic::from_int(n)])
                .expect_err("refused");
        assert!(err.to_string().contains("no table can hold"), "{err}");
        assert!(err.to_string().contains("Inv.Items"), "{err}");
    }
    let count = f.rt.call(id, "count", vec![]).unwrap();
    assert_eq!(count.as_int().unwrap(), 1);
}

#[test]
fn set_num_past_the_scripts_max_array_size_is_an_error_naming_the_key() {
    let (f, _key) = fixture_with(RhaiOptions {
        max_array_size: 1_000,
        ..RhaiOptions::default()
    });
    let (id, _obj) = f.load("inv.rhai", GROW);
    for n in [1_001_i64, 1 << 40] {
        let err =
            f.rt.call(id, "grow", vec![rhai::Dynamic::from_int(n)])
                .expect_err("refused");
        assert!(err.to_string().contains("max_array_size"), "{err}");
        assert!(err.to_string().contains("Inv.Items"), "{err}");
    }
    assert_eq!(f.rt.call(id, "count", vec![]).unwrap().as_int().unwrap(), 1);
    let grown = f.rt.call(id, "grow", vec![rhai::Dynamic::from_int(1_000)]);
    assert!(grown.is_ok(), "{grown:?}");
    assert_eq!(
        f.rt.call(id, "count", vec![]).unwrap().as_int().unwrap(),
        1_000
    );
}

//! A row listen needs a key that carries a table (its one parameter an
//! array of structs), as the Rust typed row listen does: on a key known to
//! carry something else it is refused with an error naming the key and the
//! line; on a key not known yet it is kept and hears the table stored
//! later.

mod common;

use common::Fixture;
use gantry_host::{KeyDecl, Report, Type};

#[test]
fn a_row_listen_on_a_key_declared_with_one_int_is_refused_naming_key_and_line() {
    let f = Fixture::new();
    f.hub
        .declare("Player.HP", KeyDecl::event().param("hp", Type::Int))
        .unwrap();
    let err = f.load_err(
        "hp.rhai",
        "\nListenRowMessage(SELF, \"Player.HP\", (), GMP::ALL_ROWS, |row, item| print(\"never\"));",
    );
    assert!(
        err.contains("hp.rhai:2:") && err.contains("Player.HP"),
        "{err}"
    );
    assert!(
        f.hub
            .take_reports()
            .iter()
            .any(|r| matches!(r, Report::ListenRejected { key, .. } if key == "Player.HP"))
    );
    assert_eq!(f.hub.listener_count(), 0);
}

#[test]
fn a_row_listen_on_a_key_not_known_yet_is_kept_and_hears_the_table_stored_later() {
    let f = Fixture::new();
    f.load(
        "late.rhai",
        r#"
        ListenRowMessage(SELF, "Radar.Blips", (), GMP::ALL_ROWS, |row, blip| print(`${row} ${blip.x}`));
        StoreObjectMessage(SELF, "Radar.Blips", [#{ __struct: "Blip", x: 1 }, #{ __struct: "Blip", x: 2 }]);
        "#,
    );
    assert_eq!(f.printed(), ["0 1", "1 2"]);
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

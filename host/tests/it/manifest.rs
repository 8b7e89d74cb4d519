//! `mod.toml`: a mod's declared keys and structs enter the table as
//! declared, with names, docs and a site on their line; every mistake in
//! it is an error at its line and column naming the field, all of them at
//! once; a hostile manifest is refused without blocking or reading out of
//! the mod folder.

use std::fs;
use std::path::Path;
use std::time::Duration;

use gantry_host::manifest::{
    self, MANIFEST_FILE, MAX_DOC_BYTES, MAX_MANIFEST_BYTES, MAX_PARAMS, MAX_REPORTED_ERRORS,
    Manifest, ManifestErrors, ManifestKind, Problem,
};
use gantry_host::{
    Hub, HubError, Kind, Language, Origin, Role, SignatureTable, Source, StructValue, Type, Value,
};
use gantry_test_support::guard;

const QUESTLOG: &str = r#"[mod]
name = "questlog"
version = "0.1.0"
description = "Keeps the quest log"

[structs.Quest]
fields = ["id: string", "reward: int", "title: string"]
doc = "One quest of the log."

[keys."Quest.Start"]
kind = "event"
params = ["id: string", "reward: int"]
doc = "A quest begins."

[keys."Quest.IsActive"]
kind = "request"
params = ["id: string"]
returns = ["bool"]

[keys."Quest.Log"]
kind = "table"
params = ["quests: array<Quest>"]

[keys."Quest.Current"]
kind = "store"
params = ["quest: Quest"]

[keys."Quest.Ready"]
kind = "once"

[keys."Quest.Reward"]
kind = "hook"
params = ["amount: float", "tags: array<string>"]
"#;

fn parsed(text: &str) -> Manifest {
    manifest::parse(MANIFEST_FILE, text).unwrap_or_else(|e| panic!("{e}"))
}

/// What a user sees for a manifest that does not check: one line per
/// finding.
fn shown(text: &str) -> String {
    match manifest::parse(MANIFEST_FILE, text) {
        Ok(m) => panic!("expected errors, got {m:?}"),
        Err(errors) => errors.to_string(),
    }
}

fn params(table: &SignatureTable, key: &str) -> Vec<String> {
    table
        .get(key)
        .unwrap_or_else(|| panic!("{key} declared"))
        .params
        .iter()
        .map(|p| format!("{}: {}", p.name, p.ty))
        .collect()
}

fn folder_with(text: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join(MANIFEST_FILE), text).unwrap();
    dir
}

fn load_error(dir: &Path) -> ManifestErrors {
    match manifest::load(dir) {
        Ok(m) => panic!("expected an error, got {m:?}"),
        Err(e) => e,
    }
}

#[test]
fn a_full_manifest_declares_its_keys_structs_names_and_docs() {
    let dir = folder_with(QUESTLOG.as_bytes());
    let m = manifest::load(dir.path()).unwrap().expect("a manifest");
    assert_eq!(m.file, "mod.toml");
    assert_eq!(m.module.name, "questlog");
    assert_eq!(m.module.version.as_deref(), Some("0.1.0"));
    assert_eq!(m.module.description.as_deref(), Some("Keeps the quest log"));
    let keys: Vec<&str> = m.keys.iter().map(|k| k.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "Quest.Start",
            "Quest.IsActive",
            "Quest.Log",
            "Quest.Current",
            "Quest.Ready",
            "Quest.Reward"
        ],
        "in file order"
    );

    let mut table = SignatureTable::new();
    m.declare_into(&mut table);

    let quest = table.structs.get("Quest").expect("the struct");
    let fields: Vec<String> = quest
        .fields
        .iter()
        .map(|p| format!("{}: {}", p.name, p.ty))
        .collect();
    assert_eq!(
        fields,
        ["id: string", "reward: int", "title: string"],
        "in the order written"
    );
    assert_eq!(quest.doc, "One quest of the log.");

    let start = table.get("Quest.Start").unwrap();
    assert_eq!(start.origin, Origin::Declared);
    assert_eq!(start.kind, Kind::Event);
    assert_eq!(start.doc, "A quest begins.");
    assert_eq!(params(&table, "Quest.Start"), ["id: string", "reward: int"]);
    let site = start.declaration_site().expect("a declaring site");
    assert_eq!(
        (site.file.as_str(), site.line, site.column),
        ("mod.toml", 10, 7),
        "the key's own text in its header"
    );
    assert_eq!(site.language, Language::Manifest);
    assert_eq!(site.role, Role::Declare);
    assert_eq!(site.to_string(), "mod.toml:10:7");

    let lines: Vec<(String, u32)> = table
        .entries()
        .map(|(key, e)| (key.to_owned(), e.declaration_site().unwrap().line))
        .collect();
    assert_eq!(
        lines,
        [
            ("Quest.Current".to_owned(), 24),
            ("Quest.IsActive".to_owned(), 15),
            ("Quest.Log".to_owned(), 20),
            ("Quest.Ready".to_owned(), 28),
            ("Quest.Reward".to_owned(), 31),
            ("Quest.Start".to_owned(), 10),
        ]
    );
    assert_eq!(
        params(&table, "Quest.Reward"),
        ["amount: float", "tags: array<string>"]
    );
    assert_eq!(params(&table, "Quest.Current"), ["quest: Quest"]);
    assert!(params(&table, "Quest.Ready").is_empty());
}

#[test]
fn every_kind_maps_onto_the_tables_kind_and_the_manifest_keeps_its_own() {
    let m = parsed(QUESTLOG);
    let mut table = SignatureTable::new();
    m.declare_into(&mut table);
    let kinds: Vec<(&str, ManifestKind, Kind)> = m
        .keys
        .iter()
        .map(|k| (k.key.as_str(), k.kind, table.get(&k.key).unwrap().kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("Quest.Start", ManifestKind::Event, Kind::Event),
            ("Quest.IsActive", ManifestKind::Request, Kind::Event),
            ("Quest.Log", ManifestKind::Table, Kind::Collection),
            ("Quest.Current", ManifestKind::Store, Kind::Store),
            ("Quest.Ready", ManifestKind::Once, Kind::Store),
            ("Quest.Reward", ManifestKind::Hook, Kind::Hook),
        ]
    );
    let is_active = table.get("Quest.IsActive").unwrap();
    let response = is_active.response.as_ref().expect("a request answers");
    assert_eq!(response.len(), 1);
    assert_eq!(
        (response[0].name.as_str(), &response[0].ty),
        ("ret1", &Type::Bool)
    );
    assert_eq!(is_active.signature_label(), "(id: string) -> (bool)");
    assert!(table.get("Quest.Log").unwrap().is_collection());
    assert!(
        table.get("Quest.Start").unwrap().response.is_none(),
        "only requests answer"
    );
}

#[test]
fn a_request_may_name_what_it_returns() {
    let m = parsed(
        r#"[mod]
name = "q"
[keys."Quest.Find"]
kind = "request"
params = ["id: string"]
returns = ["found: bool", "reward: int"]
"#,
    );
    let returns = m.keys[0].returns.as_ref().unwrap();
    let names: Vec<&str> = returns.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["found", "reward"]);
}

#[test]
fn a_folder_without_a_manifest_has_none_and_runs_as_before() {
    let dir = tempfile::tempdir().unwrap();
    assert!(manifest::load(dir.path()).unwrap().is_none());
}

#[test]
fn a_struct_may_be_used_before_it_is_declared() {
    let m = parsed(
        r#"[mod]
name = "q"
[keys."Quest.Start"]
kind = "event"
params = ["quest: Quest"]
[structs.Quest]
fields = ["id: string"]
"#,
    );
    assert_eq!(m.keys[0].params[0].ty, Type::Struct("Quest".into()));
}

#[test]
fn text_that_is_not_toml_is_reported_at_its_line_and_column() {
    let text = "[mod]\nname = \"q\"\n[keys.\"A\"]\nkind = = \"event\"\n";
    let errors = shown(text);
    assert!(
        errors.starts_with("mod.toml:4:8: invalid TOML: extra `=`"),
        "{errors}"
    );
}

#[test]
fn a_key_written_twice_is_an_error_naming_it() {
    let text =
        "[mod]\nname = \"q\"\n[keys.\"A\"]\nkind = \"event\"\n[keys.\"A\"]\nkind = \"store\"\n";
    let errors = shown(text);
    assert!(
        errors.starts_with("mod.toml:5:7: invalid TOML: `\"A\"` is written twice"),
        "{errors}"
    );
}

#[test]
fn a_mistyped_field_is_an_error_not_ignored_and_suggests_the_field() {
    let text = r#"[mod]
name = "q"
[keys."Quest.Start"]
kind = "event"
parms = ["id: string"]
"#;
    assert_eq!(
        shown(text),
        "mod.toml:5:1: unknown field `parms` (expected one of kind, params, returns, doc, persist) \
         in keys.\"Quest.Start\" (did you mean `params`?)"
    );
}

#[test]
fn an_unknown_table_or_top_level_field_is_an_error() {
    let text = "[modd]\nname = \"q\"\n[mod]\nname = \"q\"\nextra = 1\n[structs.Quest]\nfields = []\nfeilds = []\n";
    assert_eq!(
        shown(text),
        "mod.toml:1:2: unknown table `[modd]` (a manifest has [mod], [structs.*], [keys.*] and [grants]) (did you mean `mod`?)\n\
         mod.toml:5:1: unknown field `extra` (expected one of name, version, description, depends, optional, tick_budget_ms) in mod\n\
         mod.toml:8:1: unknown field `feilds` (expected one of fields, doc) in structs.Quest (did you mean `fields`?)"
    );
}

#[test]
fn a_manifest_without_its_mod_table_or_name_is_refused() {
    assert_eq!(
        shown("[keys.\"A\"]\nkind = \"event\"\n"),
        "mod.toml:1:1: missing table [mod]: a manifest names its mod (`[mod]` then `name = \"questlog\"`)"
    );
    assert_eq!(
        shown("[mod]\nversion = \"1\"\n"),
        "mod.toml:1:2: missing field `name` in mod"
    );
}

#[test]
fn a_mod_name_outside_lowercase_letters_digits_dash_and_underscore_is_refused() {
    for good in ["questlog", "quest-log_2"] {
        parsed(&format!("[mod]\nname = \"{good}\"\n"));
    }
    assert_eq!(
        shown("[mod]\nname = \"Quest Log\"\n"),
        "mod.toml:2:8: invalid mod name `Quest Log`: a mod name is lowercase letters, digits, `_` and `-` in mod.name"
    );
    assert_eq!(
        shown("[mod]\nname = 3\n"),
        "mod.toml:2:8: expected a string, found an integer in mod.name"
    );
}

#[test]
fn a_malformed_key_is_refused_with_the_hosts_reason() {
    let text = "[mod]\nname = \"q\"\n[keys.\"Quest..Start\"]\nkind = \"event\"\n[keys.\"Quest Start\"]\nkind = \"event\"\n";
    assert_eq!(
        shown(text),
        "mod.toml:3:7: message key `Quest..Start` has an empty segment at byte 6 in keys\n\
         mod.toml:5:7: message key `Quest Start` has invalid character ' ' at byte 5 \
         (allowed: letters, digits, `_`, and `.` between segments) in keys"
    );
    let long = "K.".repeat(20) + "K";
    assert!(
        shown(&format!(
            "[mod]\nname = \"q\"\n[keys.\"{long}\"]\nkind = \"event\"\n"
        ))
        .contains("has 21 segments; a key has at most 16"),
        "the host's limits"
    );
}

#[test]
fn an_unquoted_dotted_key_is_explained() {
    let text = "[mod]\nname = \"q\"\n[keys.Quest.Start]\nkind = \"event\"\n";
    assert_eq!(
        shown(text),
        "mod.toml:3:13: `Quest.Start` is not quoted, so TOML reads it as nested tables: \
         write [keys.\"Quest.Start\"] in keys"
    );
}

#[test]
fn an_unknown_type_points_at_the_type_and_suggests_the_nearest() {
    let text = r#"[mod]
name = "q"
[keys."Quest.Start"]
kind = "event"
params = ["id: strng", "reward: int"]
"#;
    assert_eq!(
        shown(text),
        "mod.toml:5:16: unknown type `strng` in keys.\"Quest.Start\".params (did you mean `string`?)"
    );
}

#[test]
fn a_struct_nobody_declares_is_an_unknown_struct() {
    let text = r#"[mod]
name = "q"
[structs.Quest]
fields = ["id: string"]
[keys."Quest.Start"]
kind = "event"
params = ["quest: Qeust", "all: array<Reward>"]
"#;
    assert_eq!(
        shown(text),
        "mod.toml:7:19: unknown struct `Qeust`: no [structs.Qeust] declares it in keys.\"Quest.Start\".params (did you mean `Quest`?)\n\
         mod.toml:7:39: unknown struct `Reward`: no [structs.Reward] declares it in keys.\"Quest.Start\".params"
    );
}

#[test]
fn a_type_the_table_cannot_read_is_refused_and_brackets_suggest_array() {
    let text = r#"[mod]
name = "q"
[structs.Quest]
fields = ["id: string"]
[keys."Quest.All"]
kind = "store"
params = ["all: Quest[]", "ids: array<int"]
"#;
    let errors = shown(text);
    let lines: Vec<&str> = errors.lines().collect();
    assert_eq!(lines.len(), 2, "{errors}");
    assert!(
        lines[0].starts_with("mod.toml:7:17: invalid type `Quest[]`: expected any, nil")
            && lines[0].ends_with("(did you mean `array<Quest>`?)"),
        "{errors}"
    );
    assert!(
        lines[1].starts_with("mod.toml:7:33: invalid type `array<int`"),
        "{errors}"
    );
}

#[test]
fn a_struct_field_or_parameter_written_twice_is_refused() {
    let text = r#"[mod]
name = "q"
[structs.Quest]
fields = ["id: string", "reward: int", "id: int"]
[keys."Quest.Start"]
kind = "event"
params = [
  "id: string",
  "id: string",
]
"#;
    assert_eq!(
        shown(text),
        "mod.toml:4:40: `id` is written twice (first at line 4) in structs.Quest.fields\n\
         mod.toml:9:3: `id` is written twice (first at line 8) in keys.\"Quest.Start\".params"
    );
}

#[test]
fn a_struct_named_as_a_builtin_type_or_not_as_an_identifier_is_refused() {
    let text =
        "[mod]\nname = \"q\"\n[structs.int]\nfields = []\n[structs.\"9Lives\"]\nfields = []\n";
    assert_eq!(
        shown(text),
        "mod.toml:3:10: `int` is a built-in type; a struct needs a name of its own in structs\n\
         mod.toml:5:10: `9Lives` is not a name (letters, digits and `_`, not starting with a digit) in structs"
    );
}

#[test]
fn a_parameter_not_written_as_name_and_type_is_refused() {
    let text = r#"[mod]
name = "q"
[keys."A"]
kind = "event"
params = ["id string", "9id: int", 3]
"#;
    assert_eq!(
        shown(text),
        "mod.toml:5:11: `id string` is not `name: type` in keys.A.params\n\
         mod.toml:5:25: `9id` is not a name (letters, digits and `_`, not starting with a digit) in keys.A.params\n\
         mod.toml:5:36: expected a string (`name: type`), found an integer in keys.A.params"
    );
}

#[test]
fn returns_belongs_to_requests_and_a_request_says_what_it_returns() {
    let text = r#"[mod]
name = "q"
[keys."Quest.Start"]
kind = "event"
returns = ["bool"]
[keys."Quest.IsActive"]
kind = "request"
"#;
    assert_eq!(
        shown(text),
        "mod.toml:5:1: `returns` is only for requests; this key is an `event` in keys.\"Quest.Start\"\n\
         mod.toml:6:7: a request says what it answers: add `returns = [\"bool\"]` (or `[]` for nothing) in keys.\"Quest.IsActive\""
    );
}

#[test]
fn an_unknown_kind_suggests_the_nearest() {
    let text = "[mod]\nname = \"q\"\n[keys.\"A\"]\nkind = \"evnet\"\n";
    assert_eq!(
        shown(text),
        "mod.toml:4:8: unknown kind `evnet` (one of event, store, once, request, hook, table) in keys.A.kind (did you mean `event`?)"
    );
    assert_eq!(
        shown("[mod]\nname = \"q\"\n[keys.\"A\"]\nparams = []\n"),
        "mod.toml:3:7: missing field `kind` in keys.A"
    );
}

#[test]
fn a_table_key_must_carry_one_array_of_structs() {
    let text = r#"[mod]
name = "q"
[structs.Quest]
fields = ["id: string"]
[keys."Quest.Log"]
kind = "table"
params = ["quests: array<Quest>", "extra: int"]
[keys."Quest.Ids"]
kind = "table"
params = ["ids: array<int>"]
"#;
    assert_eq!(
        shown(text),
        "mod.toml:7:10: a table key carries one parameter, an array of structs (`rows: array<Quest>`) in keys.\"Quest.Log\".params\n\
         mod.toml:10:10: a table key carries one parameter, an array of structs (`rows: array<Quest>`) in keys.\"Quest.Ids\".params"
    );
}

#[test]
fn keys_or_structs_differing_only_in_case_are_declared_twice() {
    let text = r#"[mod]
name = "q"
[structs.Quest]
fields = []
[structs.quest]
fields = []
[keys."Quest.Start"]
kind = "event"
[keys."quest.start"]
kind = "event"
"#;
    assert_eq!(
        shown(text),
        "mod.toml:5:10: `quest` is declared twice: `Quest` at line 3 differs only in case in structs\n\
         mod.toml:9:7: `quest.start` is declared twice: `Quest.Start` at line 7 differs only in case in keys"
    );
}

#[test]
fn every_mistake_is_reported_at_once_in_file_order() {
    let text = r#"[mod]
name = "Quest Log"

[structs.Quest]
fields = ["id: strng"]

[keys."Quest.Start"]
kind = "evnt"
parms = []

[keys."Quest..Done"]
kind = "event"
params = ["q: Qest"]
"#;
    let errors = manifest::parse(MANIFEST_FILE, text).unwrap_err();
    let places: Vec<(u32, u32, &str)> = errors
        .iter()
        .map(|e| (e.line, e.column, e.field.as_str()))
        .collect();
    assert_eq!(
        places,
        [
            (2, 8, "mod.name"),
            (5, 16, "structs.Quest.fields"),
            (8, 8, "keys.\"Quest.Start\".kind"),
            (9, 1, "keys.\"Quest.Start\""),
            (11, 7, "keys"),
            (13, 15, "keys.\"Quest..Done\".params"),
        ]
    );
    assert!(matches!(
        errors.errors[3].problem,
        Problem::UnknownField { .. }
    ));
    assert_eq!(errors.omitted, 0);
    assert_eq!(errors.to_string().lines().count(), 6);
}

#[test]
fn thousands_of_mistakes_are_counted_and_the_first_ones_listed() {
    let mut text = String::from("[mod]\nname = \"q\"\n");
    for i in 0..500 {
        text.push_str(&format!("[keys.\"K{i}\"]\nkind = \"nope\"\n"));
    }
    let errors = manifest::parse(MANIFEST_FILE, &text).unwrap_err();
    assert_eq!(errors.errors.len(), MAX_REPORTED_ERRORS);
    assert_eq!(errors.len(), 500);
    assert_eq!(errors.errors[0].line, 4, "the first in the file first");
    assert!(
        errors
            .to_string()
            .ends_with("mod.toml: and 400 more error(s) not shown")
    );
}

#[test]
fn a_manifest_larger_than_its_limit_is_refused_before_parsing() {
    let mut text = b"[mod]\nname = \"q\"\n".to_vec();
    text.resize(MAX_MANIFEST_BYTES as usize + 1, b'#');
    let dir = folder_with(&text);
    assert_eq!(
        load_error(dir.path()).to_string(),
        "mod.toml is larger than 1 MiB"
    );
}

#[cfg(unix)]
#[test]
fn a_manifest_that_is_a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    guard::mkfifo(&dir.path().join(MANIFEST_FILE));
    let path = dir.path().to_owned();
    let message = guard::within(Duration::from_secs(5), move || {
        load_error(&path).to_string()
    });
    assert_eq!(
        message,
        "mod.toml is a FIFO (named pipe), not a regular file"
    );
}

#[cfg(unix)]
#[test]
fn a_manifest_linking_out_of_the_mod_folder_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("elsewhere.toml");
    fs::write(&secret, "[mod]\nname = \"q\"\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&secret, dir.path().join(MANIFEST_FILE)).unwrap();
    let errors = load_error(dir.path());
    let message = errors.to_string();
    assert!(
        message.starts_with("mod.toml leads outside") && message.contains("symbolic link"),
        "{message}"
    );
    assert!(matches!(errors.errors[0].problem, Problem::File(_)));
}

#[test]
fn a_manifest_that_is_a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join(MANIFEST_FILE)).unwrap();
    assert_eq!(
        load_error(dir.path()).to_string(),
        "mod.toml is a folder, not a regular file"
    );
}

#[test]
fn a_manifest_that_is_not_utf8_is_refused() {
    let dir = folder_with(b"[mod]\nname = \"q\xff\"\n");
    assert_eq!(
        load_error(dir.path()).to_string(),
        "mod.toml is not valid UTF-8 text (line 2)"
    );
}

#[test]
fn too_many_parameters_and_a_doc_too_long_are_refused() {
    let many: Vec<String> = (0..=MAX_PARAMS).map(|i| format!("\"p{i}: int\"")).collect();
    let text = format!(
        "[mod]\nname = \"q\"\n[keys.\"A\"]\nkind = \"event\"\nparams = [{}]\ndoc = \"{}\"\n",
        many.join(", "),
        "d".repeat(MAX_DOC_BYTES + 1)
    );
    assert_eq!(
        shown(&text),
        "mod.toml:5:10: more than 256 entries in keys.A.params\n\
         mod.toml:6:7: longer than 4096 bytes in keys.A.doc"
    );
}

#[test]
fn deeply_nested_toml_is_an_error_not_a_crash() {
    let text = format!(
        "[mod]\nname = \"q\"\nx = {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let errors = guard::within(Duration::from_secs(10), move || shown(&text));
    assert!(errors.starts_with("mod.toml:3:"), "{errors}");
}

#[test]
fn declaring_twice_gives_the_same_table() {
    let m = parsed(QUESTLOG);
    let mut once = SignatureTable::new();
    m.declare_into(&mut once);
    let mut twice = once.clone();
    m.declare_into(&mut twice);
    assert_eq!(once, twice);
}

#[test]
fn a_declaration_replaces_what_runs_observed() {
    let hub = Hub::new();
    let quest = Value::structure(StructValue::new("Quest").with("name", "x"));
    hub.send_str("Quest.Start", Source::Global, (1i64, quest))
        .unwrap();
    let mut table = hub.table_snapshot();
    assert_eq!(params(&table, "Quest.Start"), ["arg1: int", "arg2: Quest"]);

    parsed(QUESTLOG).declare_into(&mut table);
    let start = table.get("Quest.Start").unwrap();
    assert_eq!(start.origin, Origin::Declared);
    assert_eq!(params(&table, "Quest.Start"), ["id: string", "reward: int"]);
    assert!(
        start.sites_with_role(Role::Send).next().is_some(),
        "the observed call sites stay"
    );
    let fields: Vec<&str> = table
        .structs
        .get("Quest")
        .unwrap()
        .fields
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(
        fields,
        ["id", "reward", "title"],
        "the declared struct replaces the observed one"
    );
}

#[test]
fn an_edited_manifest_moves_the_declaration_site_instead_of_adding_one() {
    let mut table = SignatureTable::new();
    parsed(QUESTLOG).declare_into(&mut table);
    parsed(&format!("\n\n{QUESTLOG}")).declare_into(&mut table);
    let lines: Vec<u32> = table
        .get("Quest.Start")
        .unwrap()
        .sites_with_role(Role::Declare)
        .map(|s| s.line)
        .collect();
    assert_eq!(lines, [12]);
}

#[test]
fn declared_on_a_hub_a_key_refuses_a_wrong_send_and_survives_a_merged_table() {
    let hub = Hub::new();
    parsed(QUESTLOG).declare_on(&hub).unwrap();
    let err = hub
        .send_str("Quest.Start", Source::Global, ("q1", "not an int"))
        .unwrap_err();
    assert!(matches!(err, HubError::Mismatch { .. }), "{err}");
    hub.send_str("Quest.Start", Source::Global, ("q1", 10i64))
        .unwrap();

    // A stale table file saying otherwise does not retype it.
    let mut stale = SignatureTable::new();
    stale.record_args("Quest.Start", Kind::Event, &[Value::Float(1.0)]);
    stale.keys.get_mut("Quest.Start").unwrap().origin = Origin::Declared;
    hub.merge_table(&stale);
    assert_eq!(
        params(&hub.table(), "Quest.Start"),
        ["id: string", "reward: int"]
    );
    assert!(
        hub.table()
            .get("Quest.Start")
            .unwrap()
            .declaration_site()
            .is_some()
    );
}

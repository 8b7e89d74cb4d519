//! `[mod] tick_budget_ms`: the time a mod says its listeners need per
//! tick, read as a duration; a value of the wrong type or out of range is
//! an error at its line naming the field.

use std::time::Duration;

use gantry_host::manifest::{self, MANIFEST_FILE};

fn budget_of(value: &str) -> Result<Option<Duration>, String> {
    let text = format!("[mod]\nname = \"fast\"\ntick_budget_ms = {value}\n");
    manifest::parse(MANIFEST_FILE, &text)
        .map(|m| m.module.tick_budget)
        .map_err(|e| e.to_string())
}

#[test]
fn a_tick_budget_in_whole_or_fractional_milliseconds_is_read_as_a_duration() {
    assert_eq!(budget_of("2"), Ok(Some(Duration::from_millis(2))));
    assert_eq!(budget_of("0.5"), Ok(Some(Duration::from_micros(500))));
    let none = manifest::parse(MANIFEST_FILE, "[mod]\nname = \"fast\"\n").unwrap();
    assert_eq!(none.module.tick_budget, None);
}

#[test]
fn a_tick_budget_that_is_no_number_names_the_field_and_its_line() {
    let error = budget_of("\"2ms\"").unwrap_err();
    assert_eq!(
        error,
        "mod.toml:3:18: expected a number of milliseconds, found a string in mod.tick_budget_ms"
    );
}

#[test]
fn a_tick_budget_of_zero_or_less_or_over_a_minute_is_refused_at_its_line() {
    for value in ["0", "-1", "60001", "nan"] {
        let error = budget_of(value).unwrap_err();
        assert!(
            error.starts_with("mod.toml:3:18: ") && error.contains("out of range"),
            "{value}: {error}"
        );
        assert!(error.ends_with("in mod.tick_budget_ms"), "{error}");
    }
}

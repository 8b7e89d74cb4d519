//! A key sent again and again from Rhai to Rhai listeners: once its types
//! are known, the runtime delivers a baked send itself (its lane), and
//! every such send still does what the hub's delivery does — every
//! listener in its order, a failing one reported at its own line while
//! the rest run, one removed mid-send skipped, one added mid-send heard
//! from the next send, values converted and fitted as before, each
//! object's sends to its own listeners. Each case runs baked and generic.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{DispatchLog, Key, Logged, LoggedArgs, PlainArg, Report, Value};
use gantry_rhai::runtime::RhaiOptions;

use crate::support::{Fixture, both_ways};

/// The failures the hub reported: (key, line of the listener, message).
fn failures(f: &Fixture) -> Vec<(String, Option<u32>, String)> {
    f.hub
        .take_reports()
        .into_iter()
        .filter_map(|r| match r {
            Report::ListenerFailed { key, message, site } => {
                Some((key, site.map(|s| s.line), message))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn every_repeated_send_reaches_each_listener_in_order_and_a_failure_is_reported_at_its_line() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Tick", (), |n| print(`b ${n}`), #{ order: 2 });
            ListenMessage("Tick", (), |n| { if n % 2 == 1 { throw `odd ${n}`; } print(`a ${n}`); }, #{ order: 1 });
            ListenMessage("Tick", (), |n| print(`c ${n}`), #{ order: 3 });
            for i in 0..4 { NotifyMessage("Tick", i); }
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "a 0", "b 0", "c 0", "b 1", "c 1", "a 2", "b 2", "c 2", "b 3", "c 3"
            ],
            "rewrite {rewrite}"
        );
        let failed = failures(f);
        assert_eq!(failed.len(), 2, "rewrite {rewrite}: {failed:?}");
        for ((key, line, message), n) in failed.iter().zip([1, 3]) {
            assert_eq!(
                (key.as_str(), *line),
                ("Tick", Some(3)),
                "rewrite {rewrite}"
            );
            assert!(
                message.contains(&format!("odd {n}")),
                "rewrite {rewrite}: {message}"
            );
        }
    });
}

#[test]
fn a_listener_unbound_mid_send_is_skipped_and_one_added_mid_send_hears_the_next_send() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            let c = ListenMessage("Tick", (), |n| print(`c ${n}`), #{ order: 2 });
            ListenMessage("Tick", (), |n| {
                print(`a ${n}`);
                if n == 2 {
                    c.unbind();
                    ListenMessage("Tick", (), |m| print(`d ${m}`), #{ order: 3 });
                }
            }, #{ order: 1 });
            for i in 0..4 { NotifyMessage("Tick", i); }
            "#,
        );
        assert_eq!(
            f.printed(),
            ["a 0", "c 0", "a 1", "c 1", "a 2", "a 3", "d 3"],
            "rewrite {rewrite}"
        );
        assert!(failures(f).is_empty(), "rewrite {rewrite}");
    });
}

#[test]
fn repeated_sends_convert_and_fit_values_as_a_single_send_does() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Move", (), |name, speed, on| {
                name += "!";
                print(`${name} ${type_of(speed)} ${speed} ${on}`);
            });
            ListenMessage("Move", (), |name| print(`only ${name}`));
            ListenMessage("Move", (), || print("nothing"));
            NotifyMessage("Move", "ann", 1.5, true);
            NotifyMessage("Move", "bob", 2, false);
            NotifyMessage("Move", "cy", 2.5, true);
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "ann! f64 1.5 true",
                "only ann",
                "nothing",
                "bob! f64 2.0 false",
                "only bob",
                "nothing",
                "cy! f64 2.5 true",
                "only cy",
                "nothing",
            ],
            "rewrite {rewrite}"
        );
        assert!(failures(f).is_empty(), "rewrite {rewrite}");
    });
}

#[test]
fn a_repeated_send_missing_a_value_is_refused_at_its_line() {
    both_ways(|f, rewrite| {
        let err = f.load_err(
            "a.rhai",
            "ListenMessage(\"Hit\", (), |n| print(`hit ${n}`));\nfor i in 0..2 { NotifyMessage(\"Hit\", i); }\nNotifyMessage(\"Hit\");\nprint(\"after\");\n",
        );
        assert!(
            err.starts_with("a.rhai:3:")
                && err.contains("`Hit` argument 1: expected int, got nothing"),
            "rewrite {rewrite}: {err}"
        );
        assert_eq!(f.printed(), ["hit 0", "hit 1"], "rewrite {rewrite}");
    });
}

#[test]
fn repeated_object_sends_reach_only_the_listeners_of_their_own_object() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            let o1 = GMP::Spawn();
            let o2 = GMP::Spawn();
            ListenObjectMessage(o1, "Hit", (), |n| print(`o1 ${n}`));
            ListenObjectMessage(o2, "Hit", (), |n| print(`o2 ${n}`));
            ListenWorldMessage(SELF.World(), "Hit", (), |n| print(`world ${n}`));
            for i in 0..2 {
                NotifyObjectMessage(o1, "Hit", i);
                NotifyObjectMessage(o2, "Hit", i);
                NotifyWorldMessage(SELF.World(), "Hit", i);
            }
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "o1 0", "world 0", "o2 0", "world 0", "world 0", "o1 1", "world 1", "o2 1",
                "world 1", "world 1",
            ],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn a_listener_taking_more_than_a_repeated_send_carries_fails_each_time_in_the_same_words() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Late", (), |a, b| print("never"));
            ListenMessage("Late", (), |a| print(`late ${a}`));
            for i in 0..3 { NotifyMessage("Late", i); }
            "#,
        );
        assert_eq!(
            f.printed(),
            ["late 0", "late 1", "late 2"],
            "rewrite {rewrite}"
        );
        let failed = failures(f);
        assert_eq!(failed.len(), 3, "rewrite {rewrite}: {failed:?}");
        assert!(
            failed
                .iter()
                .all(|(_, line, m)| *line == Some(2) && *m == failed[0].2),
            "rewrite {rewrite}: {failed:?}"
        );
    });
}

#[test]
fn a_listener_stopped_by_its_budget_on_a_repeated_send_leaves_the_others_running() {
    for rewrite in [true, false] {
        let f = Fixture::with(RhaiOptions {
            rewrite,
            budget: Some(10_000),
            ..RhaiOptions::default()
        });
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Tick", (), |n| { if n == 1 { loop {} } print(`a ${n}`); });
            ListenMessage("Tick", (), |n| print(`b ${n}`));
            for i in 0..3 { NotifyMessage("Tick", i); }
            "#,
        );
        assert_eq!(
            f.printed(),
            ["a 0", "b 0", "b 1", "a 2", "b 2"],
            "rewrite {rewrite}"
        );
        let failed = failures(&f);
        assert_eq!(failed.len(), 1, "rewrite {rewrite}: {failed:?}");
        assert!(
            failed[0].2.contains("operation limit exceeded"),
            "rewrite {rewrite}: {failed:?}"
        );
    }
}

/// What a dispatch log heard: each send's key, values and whether it was
/// outermost.
#[derive(Default)]
struct Heard(RefCell<Vec<(Key, Vec<String>, bool)>>);

impl DispatchLog for Heard {
    fn dispatch(&self, d: &Logged<'_>) {
        let values = match d.args {
            LoggedArgs::Values(values) => (values.iter())
                .map(|v| match v {
                    Value::Int(i) => i.to_string(),
                    Value::Float(x) => format!("{x:?}"),
                    Value::Bool(b) => b.to_string(),
                    Value::Str(s) => format!("{s:?}"),
                    other => format!("{other:?}"),
                })
                .collect(),
            LoggedArgs::Plain(plain) => (plain.iter())
                .map(|p| match p {
                    PlainArg::Int(i) => i.to_string(),
                    PlainArg::Float(x) => format!("{x:?}"),
                    PlainArg::Bool(b) => b.to_string(),
                    PlainArg::Str(s) => format!("{s:?}"),
                })
                .collect(),
        };
        self.0.borrow_mut().push((d.key, values, d.outermost));
    }
}

#[test]
fn a_recording_hears_every_repeated_send_with_its_values_and_nesting() {
    both_ways(|f, rewrite| {
        let heard = Rc::new(Heard::default());
        f.hub.set_dispatch_log(Some(heard.clone()));
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Tick", (), |n, name, x, on| {
                if n == 1 { NotifyMessage("Nested", n); }
            });
            ListenMessage("Nested", (), |n| print(`nested ${n}`));
            for i in 0..3 { NotifyMessage("Tick", i, `s${i}`, 0.5, i == 1); }
            "#,
        );
        assert_eq!(f.printed(), ["nested 1"], "rewrite {rewrite}");
        let heard: Vec<String> = (heard.0.borrow().iter())
            .map(|(key, values, outermost)| {
                format!("{} {} {outermost}", f.hub.key_name(*key), values.join(","))
            })
            .collect();
        assert_eq!(
            heard,
            [
                "Tick 0,\"s0\",0.5,false true",
                "Tick 1,\"s1\",0.5,true true",
                "Nested 1 false",
                "Tick 2,\"s2\",0.5,false true",
            ],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn a_listener_unbinding_its_owners_listeners_mid_send_skips_them_from_then_on() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Tick", (), |n| { print(`a ${n}`); if n == 1 { UnbindMessage("Tick", This()); } });
            ListenMessage("Tick", (), |n| print(`b ${n}`));
            for i in 0..3 { NotifyMessage("Tick", i); }
            "#,
        );
        assert_eq!(f.printed(), ["a 0", "b 0", "a 1"], "rewrite {rewrite}");
        assert!(failures(f).is_empty(), "rewrite {rewrite}");
    });
}

#[test]
fn a_script_unloaded_by_its_own_listener_mid_send_hears_nothing_more() {
    for rewrite in [true, false] {
        let f = Rc::new(Fixture::with(RhaiOptions {
            rewrite,
            ..RhaiOptions::default()
        }));
        let (id, _) = f.load(
            "quitter.rhai",
            r#"
            ListenMessage("Quit", (), |n| { print(`first ${n}`); if n == 1 { NotifyMessage("Unload"); } });
            ListenMessage("Quit", (), |n| print(`second ${n}`));
            "#,
        );
        let weak = Rc::downgrade(&f);
        let _unloader = f
            .hub
            .listen("Unload", gantry_host::Source::Global, move || {
                if let Some(f) = weak.upgrade() {
                    assert!(gantry_host::face::ScriptRuntime::unload(&f.rt, id));
                }
            })
            .unwrap();
        f.load(
            "sender.rhai",
            r#"for i in 0..3 { NotifyMessage("Quit", i); }"#,
        );
        assert_eq!(
            f.printed(),
            ["first 0", "second 0", "first 1"],
            "rewrite {rewrite}"
        );
        assert!(failures(&f).is_empty(), "rewrite {rewrite}");
        assert_eq!(f.rt.live_environments(), 1, "rewrite {rewrite}");
    }
}

//! Requests from Lua: the reply function runs once with the first answer, a
//! responder ignored is reported unanswered at the script's line, and the
//! responder goes to listeners with a parameter left for it.

use gantry_host::Report;

use crate::support::Fixture;

fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::new();
        f.rt.set_rewrite(rewrite);
        test(&f, rewrite);
    }
}

/// "an unanswered request is reported, not silently lost" — a Lua
/// listener that ignores its responder leaves the request unanswered, and
/// that is reported when the send is over (not whenever the collector
/// happens to run).
#[test]
fn request_a_lua_listener_ignoring_its_responder_is_reported_unanswered() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenObjectMessage(self, "Price", nil, function(item) print("asked", item) end)
            SendObjectMessage(self, "Price", "sword", function(v) print("reply", v) end)
            print("after")
            "#,
        );
        let printed = f.printed();
        assert_eq!(printed, ["asked\tsword", "after"], "rewrite {rewrite}");
        let unanswered = |reports: Vec<Report>| {
            reports
                .iter()
                .any(|r| matches!(r, Report::Unanswered { key, .. } if key == "Price"))
        };
        let at_once = unanswered(f.hub.take_reports());
        f.rt.collect_garbage().unwrap();
        let after_collection = unanswered(f.hub.take_reports());
        assert!(
            at_once,
            "rewrite {rewrite}: not reported when the send is over \
             (reported after a full collection: {after_collection})"
        );
    });
}

/// "the callback is one-shot": two Lua listeners answering one request
/// call the reply function once, with the first answer.
#[test]
fn request_two_lua_responders_reply_function_runs_once_with_the_first_answer() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenObjectMessage(self, "Ask", nil, function(n, rsp) print("first", rsp:Response(n + 1)) end)
            ListenObjectMessage(self, "Ask", nil, function(n, rsp) print("second", rsp:Response(n + 2)) end)
            SendObjectMessage(self, "Ask", 1, function(v) print("reply", v) end)
            "#,
        );
        assert_eq!(
            f.printed(),
            ["reply\t2", "first\ttrue", "second\tfalse"],
            "rewrite {rewrite}"
        );
    });
}

/// "take FGMPResponder& as the last parameter and GMP knows": a Lua
/// listener gets the responder only when it has a parameter left for it —
/// declared after the arguments, or a vararg function — and may keep it to
/// answer later; one that cannot take it leaves the request to be reported
/// when the send ends, even when another listener is called after it.
#[test]
fn request_responder_goes_to_listeners_with_a_parameter_left_for_it() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r##"
            local kept
            ListenObjectMessage(self, "Ask.Later", nil, function(a, b) print("two params", a, b) end)
            ListenObjectMessage(self, "Ask.Later", nil, function(...) print("vararg", select("#", ...)) end)
            ListenObjectMessage(self, "Ask.Later", nil, function(a, b, rsp) kept = rsp end)
            SendObjectMessage(self, "Ask.Later", "x", "y", function(v) print("reply", v) end)
            print("sent")
            kept:Response(7)
            "##,
        );
        assert_eq!(
            f.printed(),
            ["two params\tx\ty", "vararg\t3", "sent", "reply\t7"],
            "rewrite {rewrite}"
        );
        let reports = f.hub.take_reports();
        assert!(
            !reports
                .iter()
                .any(|r| matches!(r, Report::Unanswered { .. })),
            "rewrite {rewrite}: {reports:?}"
        );
    });
}

#[test]
fn request_unanswered_from_lua_is_reported_with_the_scripts_line() {
    both_ways(|f, rewrite| {
        f.load(
            "ask.lua",
            "\nSendObjectMessage(self, 'Nobody.Answers', 1, function() print('never') end)\n",
        );
        assert!(f.printed().is_empty());
        let reports = f.hub.take_reports();
        let Some(Report::Unanswered {
            key,
            site: Some(site),
            ..
        }) = reports.first()
        else {
            panic!("rewrite {rewrite}: {reports:?}");
        };
        assert_eq!(key, "Nobody.Answers");
        assert_eq!((site.file.as_str(), site.line), ("ask.lua", 2));
    });
}

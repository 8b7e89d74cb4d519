//! Requests from Rhai: the reply closure runs once with the first answer,
//! and a responder ignored or a request unanswered is reported at the
//! script's line.

use gantry_host::Report;

use crate::support::both_ways;

/// "an unanswered request is reported, not silently lost" — a Rhai
/// listener that ignores its responder leaves the request unanswered; the
/// requester is not called and the report is filed when the send is over.
#[test]
fn request_a_rhai_listener_ignoring_its_responder_is_reported_unanswered() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenObjectMessage(SELF, "Price", (), |item, rsp| print(`asked ${item}`));
            SendObjectMessage(SELF, "Price", "sword", |v| print(`reply ${v}`));
            print("after");
            "#,
        );
        assert_eq!(f.printed(), ["asked sword", "after"], "rewrite {rewrite}");
        let reports = f.hub.take_reports();
        assert!(
            reports
                .iter()
                .any(|r| matches!(r, Report::Unanswered { key, .. } if key == "Price")),
            "rewrite {rewrite}: {reports:?}"
        );
    });
}

/// "the callback is one-shot": two Rhai listeners answering one request
/// call the reply closure once, with the first answer; the second answer is
/// refused.
#[test]
fn request_two_rhai_responders_reply_closure_runs_once_with_the_first_answer() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenObjectMessage(SELF, "Ask", (), |n, rsp| print(`first ${rsp.Response(n + 1)}`));
            ListenObjectMessage(SELF, "Ask", (), |n, rsp| print(`second ${rsp.Response(n + 2)}`));
            SendObjectMessage(SELF, "Ask", 1, |v| print(`reply ${v}`));
            "#,
        );
        assert_eq!(
            f.printed(),
            ["reply 2", "first true", "second false"],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn request_unanswered_from_rhai_is_reported_with_the_scripts_line() {
    both_ways(|f, rewrite| {
        f.load(
            "ask.rhai",
            "\nSendObjectMessage(SELF, \"Nobody.Answers\", 1, |v| print(\"never\"));\n",
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
        assert_eq!((site.file.as_str(), site.line), ("ask.rhai", 2));
    });
}

//! Property tests of the hook's pure path: any payload a host could send,
//! however malformed, is parsed, planned and answered without a panic, the
//! answer is one JSON object, and a secret planted anywhere in the tool's
//! input, response or the prompt never reaches what would be stored.

use mnemo_capture::adapter::{self, Env};
use mnemo_capture::handler::{self, Context};
use mnemo_core::Config;
use mnemo_core::model::Platform;
use mnemo_core::privacy::Sanitizer;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// A GitHub token in the documented format (not a real one).
const SECRET: &str = "ghp_Zq8Yw7Xv6Uu5Tt4Ss3Rr2Qq1Pp0OoNnMmLlKk";

/// Keys a Claude Code payload uses, and others.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("hook_event_name".to_owned()),
        Just("session_id".to_owned()),
        Just("tool_name".to_owned()),
        Just("tool_input".to_owned()),
        Just("tool_response".to_owned()),
        Just("tool_use_id".to_owned()),
        Just("cwd".to_owned()),
        Just("prompt".to_owned()),
        Just("file_path".to_owned()),
        Just("command".to_owned()),
        Just("content".to_owned()),
        "[a-zA-Z_]{1,10}",
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,40}".prop_map(Value::from),
        Just(Value::from(
            "<private>hidden</private> and <mnemo-context>x"
        )),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn event_name() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        Just("SessionStart".to_owned()),
        Just("UserPromptSubmit".to_owned()),
        Just("PreToolUse".to_owned()),
        Just("PostToolUse".to_owned()),
        Just("PostToolUseFailure".to_owned()),
        Just("Stop".to_owned()),
        Just("SessionEnd".to_owned()),
        "[A-Za-z]{0,12}",
    ])
}

/// Puts the secret somewhere inside `v` (a string leaf, or a new one).
fn plant(v: &mut Value, path: &[usize]) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            let i = path.first().copied().unwrap_or(0) % m.len();
            let k = m.keys().nth(i).cloned().unwrap_or_default();
            if let Some(child) = m.get_mut(&k) {
                plant(child, path.get(1..).unwrap_or(&[]));
            }
        }
        Value::Array(a) if !a.is_empty() => {
            let i = path.first().copied().unwrap_or(0) % a.len();
            plant(&mut a[i], path.get(1..).unwrap_or(&[]));
        }
        Value::String(s) => s.push_str(&format!(" token={SECRET} ")),
        other => *other = Value::from(format!("export GITHUB_TOKEN={SECRET}")),
    }
}

fn run(payload: &Value, event: Option<&str>) -> (handler::Plan, Value) {
    let config = Config::default();
    let sanitizer = Sanitizer::new(&config.privacy);
    let ctx = Context {
        config: &config,
        sanitizer: &sanitizer,
        now_ms: 1_790_000_000_000,
    };
    let mut last = (handler::Plan::default(), Value::Null);
    for platform in Platform::ALL {
        let input = adapter::parse(platform, payload, event, &Env::default());
        let plan = handler::plan(&input, &ctx);
        let answer = adapter::render(&input, &plan.response);
        last = (plan, answer);
    }
    last
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn any_payload_is_planned_and_answered_with_one_object(
        payload in value(),
        event in event_name(),
    ) {
        let (_, answer) = run(&payload, event.as_deref());
        prop_assert!(answer.is_object(), "{answer}");
    }

    #[test]
    fn a_planted_secret_never_reaches_the_capture(
        tool_input in value(),
        tool_response in value(),
        prompt in ".{0,30}",
        field in 0usize..3,
        path in prop::collection::vec(any::<usize>(), 0..5),
        event in prop_oneof![Just("PostToolUse"), Just("PostToolUseFailure"), Just("UserPromptSubmit")],
    ) {
        let mut payload = json!({
            "session_id": "s1",
            "cwd": "/tmp/project",
            "hook_event_name": event,
            "tool_name": "Bash",
            "tool_use_id": "toolu_1",
            "tool_input": tool_input,
            "tool_response": tool_response,
            "error": "failed",
            "prompt": prompt,
        });
        let target = ["tool_input", "tool_response", "prompt"][field];
        plant(&mut payload[target], &path);
        let (plan, answer) = run(&payload, Some(event));
        let stored = format!("{:?} {answer}", plan.capture);
        prop_assert!(!stored.contains(SECRET), "{stored}");
        prop_assert!(!stored.contains("hidden"), "{stored}");
    }
}

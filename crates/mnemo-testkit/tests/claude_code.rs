//! The real Claude Code (installed from npm on first use, ~370 MB) driven
//! through a scripted session by the stand-in, in a sandbox with an empty
//! HOME.

use std::fs;
use std::time::{Duration, Instant};

use mnemo_testkit::{CLAUDE_CODE_VERSION, Reply, Sandbox, StandIn, Step, claude_binary};
use serde_json::{Value, json};

#[test]
fn claude_code_runs_a_scripted_session_against_the_stand_in() -> anyhow::Result<()> {
    let started = Instant::now();
    claude_binary()?;
    eprintln!("claude_binary() took {:?}", started.elapsed());

    let sandbox = Sandbox::new();
    let file = sandbox.project().join("hello.txt");
    let server =
        StandIn::with_script([Step::write(&file, "hi\n"), Step::text("Created hello.txt.")]);
    let output = sandbox
        .claude(&server.base_url(), "Create hello.txt saying hi")
        .max_turns(5)
        .run()?;
    eprintln!("the session took {:?}", output.elapsed);
    output.expect_success();

    assert_eq!(fs::read_to_string(&file)?, "hi\n");
    assert_eq!(output.result(), Some("Created hello.txt."));
    let requests = server.requests();
    assert!(requests.len() >= 2, "{} requests", requests.len());

    // What 2.1.328 sends with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1:
    // only streamed POST /v1/messages?beta=true turns of the main
    // conversation, the second one carrying the Write tool's result.
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(request.path, "/v1/messages?beta=true");
        assert!(request.is_stream());
        assert!(!request.is_side_request());
        assert_eq!(request.header("x-api-key"), Some("sk-test"));
        assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
        let agent = request.header("user-agent").unwrap_or_default();
        assert!(agent.contains(CLAUDE_CODE_VERSION), "{agent}");
        assert!(request.tool_names().iter().any(|t| t == "Write"));
    }
    assert_eq!(requests[0].tool_result_count(), 0);
    let last = requests.last().unwrap();
    assert_eq!(last.tool_result_count(), 1);
    assert!(
        last.tool_result_texts()[0].contains("File created successfully"),
        "{:?}",
        last.tool_result_texts()
    );
    Ok(())
}

#[test]
fn hooks_come_from_the_fake_home_and_their_context_reaches_the_model() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let log = sandbox.root().join("hooks.jsonl");
    let record = format!("cat >> '{}'; echo >> '{}'", log.display(), log.display());
    let context = r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"remembered: the answer is 42"}}"#;
    let settings = json!({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command",
            "command": format!("{record}; echo '{context}'")}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": record}]}],
    }});
    fs::create_dir_all(sandbox.home().join(".claude"))?;
    fs::write(
        sandbox.home().join(".claude/settings.json"),
        settings.to_string(),
    )?;

    let server = StandIn::with_script([Step::bash("echo from-bash")]);
    let output = sandbox
        .claude(&server.base_url(), "Run echo")
        .max_turns(5)
        .run()?;
    output.expect_success();
    assert_eq!(output.result(), Some("Done."));

    let events: Vec<Value> = fs::read_to_string(&log)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["SessionStart", "PostToolUse"], "{events:#?}");
    let post = &events[1];
    assert_eq!(post["tool_name"], "Bash");
    assert_eq!(post["tool_input"]["command"], "echo from-bash");
    assert_eq!(post["cwd"], sandbox.project().to_string_lossy().as_ref());

    let requests = server.requests();
    assert!(
        requests[0].body_contains("remembered: the answer is 42"),
        "the SessionStart context reaches the model"
    );
    assert!(
        requests
            .last()
            .unwrap()
            .tool_result_texts()
            .iter()
            .any(|t| t.contains("from-bash"))
    );
    Ok(())
}

#[test]
fn a_session_that_hangs_is_killed_at_the_timeout() -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let server =
        StandIn::with_responder(|_| Reply::text("too late").delayed(Duration::from_secs(60)));
    let started = Instant::now();
    let err = sandbox
        .claude(&server.base_url(), "Say something")
        .timeout(Duration::from_secs(3))
        .run()
        .expect_err("the stand-in never answers in time");
    assert!(
        err.to_string().contains("did not finish within 3s"),
        "{err:#}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        server.wait_for_requests(1, Duration::from_secs(1))?.len(),
        1
    );
    Ok(())
}

//! Secrets and private text never reach any file of the data directory:
//! not the database, its WAL, the spool, nor the logs.

mod common;

use common::*;
use serde_json::json;

/// Fake credentials in the shapes the providers use, assembled at run time so
/// that this file does not itself look like it leaks keys.
fn secrets() -> Vec<(&'static str, String)> {
    vec![
        ("aws", format!("AKIA{}", "Q7ZL4MXW2PBN6RTY")),
        (
            "github",
            format!("ghp_{}", "x9Kq2Lm4Np6Rs8Tv0Wy3Za5Bc7De1Fg2Hj4K"),
        ),
        (
            "anthropic",
            format!(
                "sk-ant-api03-{}",
                "Zq8xW3vT6uR1yP4oN7mL0kJ2hG5fD9sA-bC3eF6gH8jK1lM4nP7qR0sT2u"
            ),
        ),
        (
            "openai",
            format!("sk-proj-{}", "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2"),
        ),
        (
            "stripe",
            format!("sk_live_{}", "51HxQ2eK3vL7mN9pR4tW8yZ1cF5gJ0"),
        ),
        (
            "slack",
            format!("xoxb-{}", "1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx"),
        ),
        ("password", "correct-horse-battery-staple-42".to_owned()),
        ("url", "s3cr3tP4ssw0rd".to_owned()),
    ]
}

#[test]
fn secrets_and_private_text_leave_no_trace_in_the_data_directory() {
    let env = Env::new();
    let proj = env.dir.path().join("app");
    std::fs::create_dir_all(&proj).unwrap();
    let s: std::collections::HashMap<_, _> = secrets().into_iter().collect();

    let prompt = format!(
        "deploy with key {} <private>the vault code is tangerine-7731</private> thanks",
        s["aws"]
    );
    let steps = vec![
        (
            "UserPromptSubmit",
            json!({"session_id": "sec", "cwd": proj, "hook_event_name": "UserPromptSubmit",
                   "prompt_id": "p1", "prompt": prompt}),
        ),
        (
            "PostToolUse",
            json!({"session_id": "sec", "cwd": proj, "hook_event_name": "PostToolUse",
                   "tool_name": "Write", "tool_use_id": "t1",
                   "tool_input": {"file_path": proj.join("config.py"),
                                  "content": format!("GITHUB_TOKEN = \"{}\"\nANTHROPIC_API_KEY = \"{}\"\n", s["github"], s["anthropic"])},
                   "tool_response": {"type": "create"}}),
        ),
        (
            "PostToolUse",
            json!({"session_id": "sec", "cwd": proj, "hook_event_name": "PostToolUse",
                   "tool_name": "Bash", "tool_use_id": "t2",
                   "tool_input": {"command": format!("curl -H 'Authorization: Bearer {}' https://api.openai.com/v1/models", s["openai"])},
                   "tool_response": {"stdout": format!("STRIPE_KEY={}\nSLACK={}\nDB_PASSWORD={}\ngit remote: https://deploy:{}@git.example.com/app.git",
                                                       s["stripe"], s["slack"], s["password"], s["url"]),
                                     "stderr": ""}}),
        ),
        (
            "PostToolUse",
            json!({"session_id": "sec", "cwd": proj, "hook_event_name": "PostToolUse",
                   "tool_name": "Read", "tool_use_id": "t3",
                   "tool_input": {"file_path": proj.join(".env")},
                   "tool_response": {"type": "text", "file": {"content": "PLAIN_VALUE=shouldnotbestored-9f8e7d"}}}),
        ),
        (
            "PostToolUseFailure",
            json!({"session_id": "sec", "cwd": proj, "hook_event_name": "PostToolUseFailure",
                   "tool_name": "Bash", "tool_use_id": "t4",
                   "tool_input": {"command": "psql"},
                   "error": format!("connection to postgres://app:{}@db failed", s["url"])}),
        ),
        (
            "Stop",
            json!({"session_id": "sec", "cwd": proj, "hook_event_name": "Stop",
                   "last_assistant_message": format!("Done. I used the token {} as asked.", s["github"])}),
        ),
    ];
    for (event, payload) in &steps {
        assert_hook_ok(&env.hook(event, &payload.to_string()));
    }
    // The same again while the database is locked, so the spool is exercised.
    let holder = env.db();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    for (event, payload) in &steps[1..3] {
        let mut p = payload.clone();
        p["tool_use_id"] = json!(format!("{}-spooled", p["tool_use_id"].as_str().unwrap()));
        let out = env.hook_with(event, &p.to_string(), |c| {
            c.env("MNEMO_STORE_BUSY_TIMEOUT_MS", "50");
        });
        assert_hook_ok(&out);
    }
    let spool = std::fs::read(env.data().join("spool/pending.jsonl")).unwrap();
    assert!(!spool.is_empty());

    let mut forbidden: Vec<Vec<u8>> = secrets().into_iter().map(|(_, v)| v.into_bytes()).collect();
    forbidden.push(b"tangerine-7731".to_vec());
    forbidden.push(b"shouldnotbestored-9f8e7d".to_vec());
    for (path, bytes) in all_bytes_under(&env.data()) {
        for needle in &forbidden {
            assert!(
                !contains_bytes(&bytes, needle),
                "{} leaked into {}",
                String::from_utf8_lossy(needle),
                path.display()
            );
        }
    }
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);

    // What is kept is still useful: the redaction markers and the rest of the text.
    let db = env.db();
    let prompt: String = db
        .query_row("SELECT text FROM prompts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(prompt, "deploy with key [REDACTED:aws-access-key] thanks");
    let bash: String = db
        .query_row(
            "SELECT response FROM events WHERE tool_use_id = 't2'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(bash.contains("[REDACTED:"), "{bash}");
    assert!(bash.contains("git.example.com/app.git"), "{bash}");
    let (read_input, read_response, note): (String, Option<String>, String) = db
        .query_row(
            "SELECT input, response, note FROM events WHERE tool_use_id = 't3'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert!(read_input.contains(".env"));
    assert_eq!(read_response, None);
    assert!(note.contains("deny list"), "{note}");
}

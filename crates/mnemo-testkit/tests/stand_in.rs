//! The stand-in LLM server over real HTTP, spoken to by hand (std
//! `TcpStream`, hand-written requests) so that the framing is checked byte
//! for byte rather than through a client library's leniency.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use mnemo_testkit::{Block, Reply, StandIn, Step, Usage};
use serde_json::{Value, json};

struct HttpResponse {
    status: u16,
    headers: BTreeMap<String, String>,
    body: String,
}

impl HttpResponse {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> HttpResponse {
    let mut stream = TcpStream::connect(addr).expect("connect to the stand-in");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, rest) = raw.split_once("\r\n\r\n").expect("a header/body separator");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    assert!(status_line.starts_with("HTTP/1.1 "), "{status_line}");
    let status = status_line[9..12].parse().unwrap();
    let headers: BTreeMap<String, String> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.trim().to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    let body = if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
        dechunk(rest)
    } else {
        let len: usize = headers["content-length"].parse().unwrap();
        assert_eq!(rest.len(), len, "body length matches content-length");
        rest.to_owned()
    };
    HttpResponse {
        status,
        headers,
        body,
    }
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n").unwrap();
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
}

fn post(addr: SocketAddr, path: &str, body: &Value) -> HttpResponse {
    http(addr, "POST", path, &[], &body.to_string())
}

/// `(event name, data)` of each server-sent event, checking the framing.
fn sse_events(body: &str) -> Vec<(String, Value)> {
    assert!(body.ends_with("\n\n"), "the stream ends with a blank line");
    body.trim_end()
        .split("\n\n")
        .map(|event| {
            let mut lines = event.lines();
            let name = lines.next().unwrap().strip_prefix("event: ").unwrap();
            let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
            assert!(lines.next().is_none(), "one data line per event: {event}");
            let data: Value = serde_json::from_str(data).unwrap();
            assert_eq!(data["type"], name, "event name matches data.type");
            (name.to_owned(), data)
        })
        .collect()
}

fn tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// A main-conversation request as Claude Code sends it, carrying
/// `tool_results` tool results.
fn claude_request(stream: bool, tool_results: usize) -> Value {
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": "go"}]})];
    for i in 0..tool_results {
        messages.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": format!("toolu_{i}"), "name": "Bash", "input": {}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": format!("out {i}")}]}));
    }
    json!({
        "model": "claude-opus-5-5",
        "max_tokens": 128000,
        "stream": stream,
        "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.328.ed2;"},
                   {"type": "text", "text": "You are a Claude agent."}],
        "tools": [{"name": "Write", "input_schema": {}}, {"name": "Bash", "input_schema": {}}],
        "messages": messages,
    })
}

#[test]
fn anthropic_stream_has_the_framing_claude_code_accepts() {
    let input = json!({"file_path": "/tmp/project/hello.txt", "content": "hi\n"});
    let server =
        StandIn::with_script([Step::tool("Write", input.clone()).with_text("Working on it.")]);
    let body = claude_request(true, 0);
    let response = post(server.addr(), "/v1/messages?beta=true", &body);

    assert_eq!(response.status, 200);
    assert_eq!(response.headers["content-type"], "text/event-stream");
    assert_eq!(response.headers["connection"], "close");
    let events = sse_events(&response.body);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    let start = &events[0].1["message"];
    assert_eq!(start["model"], "claude-opus-5-5");
    assert_eq!(start["role"], "assistant");
    assert_eq!(start["content"], json!([]));
    assert!(start["id"].as_str().unwrap().starts_with("msg_"));
    let input_tokens = tokens(body.to_string().len());
    assert_eq!(start["usage"]["input_tokens"], input_tokens);

    assert_eq!(
        events[2].1["content_block"],
        json!({"type": "text", "text": ""})
    );
    let text: String = events[3..5]
        .iter()
        .map(|(_, d)| {
            assert_eq!(d["delta"]["type"], "text_delta");
            assert_eq!(d["index"], 0);
            d["delta"]["text"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(text, "Working on it.");

    let tool = &events[6].1["content_block"];
    assert_eq!(tool["type"], "tool_use");
    assert_eq!(tool["name"], "Write");
    assert_eq!(tool["input"], json!({}));
    assert!(tool["id"].as_str().unwrap().starts_with("toolu_"));
    let partial: String = events[7..9]
        .iter()
        .map(|(_, d)| {
            assert_eq!(d["delta"]["type"], "input_json_delta");
            assert_eq!(d["index"], 1);
            let piece = d["delta"]["partial_json"].as_str().unwrap().to_owned();
            assert!(!piece.is_empty());
            piece
        })
        .collect();
    assert_eq!(serde_json::from_str::<Value>(&partial).unwrap(), input);

    let delta = &events[10].1;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    let output_tokens = tokens("Working on it.".len() + input.to_string().len());
    assert_eq!(delta["usage"]["output_tokens"], output_tokens);
    assert_eq!(
        server.usage(),
        Usage {
            input_tokens,
            output_tokens,
            replies: 1
        }
    );
}

#[test]
fn anthropic_json_message_and_usage_totals() {
    let server = StandIn::with_script([Step::bash("echo hi")]);
    let first = claude_request(false, 0);
    let response = post(server.addr(), "/v1/messages", &first);
    assert_eq!(response.status, 200);
    assert_eq!(response.headers["content-type"], "application/json");
    let message = response.json();
    assert_eq!(message["type"], "message");
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["model"], "claude-opus-5-5");
    assert_eq!(message["stop_reason"], "tool_use");
    let content = message["content"].as_array().unwrap();
    assert_eq!(content.len(), 1);
    assert_eq!(content[0]["type"], "tool_use");
    assert_eq!(content[0]["name"], "Bash");
    assert_eq!(content[0]["input"], json!({"command": "echo hi"}));
    assert!(content[0]["id"].as_str().unwrap().starts_with("toolu_"));
    let first_out = tokens(json!({"command": "echo hi"}).to_string().len());
    assert_eq!(
        message["usage"],
        json!({"input_tokens": tokens(first.to_string().len()), "output_tokens": first_out})
    );

    // After the last step: "Done." and end_turn.
    let second = claude_request(false, 1);
    let message = post(server.addr(), "/v1/messages", &second).json();
    assert_eq!(message["stop_reason"], "end_turn");
    assert_eq!(
        message["content"],
        json!([{"type": "text", "text": "Done."}])
    );
    assert_eq!(message["usage"]["output_tokens"], tokens("Done.".len()));

    assert_eq!(
        server.usage(),
        Usage {
            input_tokens: tokens(first.to_string().len()) + tokens(second.to_string().len()),
            output_tokens: first_out + tokens(5),
            replies: 2,
        }
    );
}

#[test]
fn script_steps_follow_the_tool_result_count() {
    let server = StandIn::builder()
        .script([
            Step::bash("one"),
            Step::tools([
                ("Bash", json!({"command": "two"})),
                ("Bash", json!({"command": "three"})),
            ]),
            Step::text("All done here."),
        ])
        .final_text("Unreachable")
        .side_text("side answer")
        .start();
    let reply_to = |body: &Value| post(server.addr(), "/v1/messages", body).json();
    let commands = |message: &Value| -> Vec<String> {
        message["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| b["input"]["command"].as_str().unwrap().to_owned())
            .collect()
    };

    assert_eq!(commands(&reply_to(&claude_request(false, 0))), ["one"]);
    // A retry (same conversation) gets the same step.
    assert_eq!(commands(&reply_to(&claude_request(false, 0))), ["one"]);
    assert_eq!(
        commands(&reply_to(&claude_request(false, 1))),
        ["two", "three"]
    );
    let last = reply_to(&claude_request(false, 3));
    assert_eq!(last["content"][0]["text"], "All done here.");
    assert_eq!(last["stop_reason"], "end_turn");

    // Side requests do not use a step: no tools, a quota probe, a subagent.
    let mut no_tools = claude_request(false, 0);
    no_tools.as_object_mut().unwrap().remove("tools");
    let mut probe = claude_request(false, 0);
    probe["max_tokens"] = json!(1);
    let mut subagent = claude_request(false, 0);
    subagent["system"][0]["text"] = json!("x-anthropic-billing-header: cc_is_subagent=true;");
    for body in [&no_tools, &probe, &subagent] {
        let message = reply_to(body);
        assert_eq!(
            message["content"],
            json!([{"type": "text", "text": "side answer"}])
        );
        assert_eq!(message["stop_reason"], "end_turn");
    }
    let agent = http(
        server.addr(),
        "POST",
        "/v1/messages",
        &[("x-claude-code-agent-id", "a037fb9ec5dbf789")],
        &claude_request(false, 0).to_string(),
    );
    assert_eq!(agent.json()["content"][0]["text"], "side answer");
    // ...and the script still continues where it was.
    assert_eq!(commands(&reply_to(&claude_request(false, 0))), ["one"]);

    let requests = server.requests();
    assert_eq!(requests.len(), 9);
    assert_eq!(requests[2].tool_result_count(), 1);
    assert_eq!(requests[2].tool_result_texts(), ["out 0"]);
    assert!(requests[4..8].iter().all(|r| r.is_side_request()));
    assert!(!requests[8].is_side_request());
}

#[test]
fn requests_are_recorded() {
    let server = StandIn::with_script([]);
    let body = claude_request(true, 0);
    http(
        server.addr(),
        "POST",
        "/v1/messages?beta=true",
        &[
            ("X-Api-Key", "sk-test"),
            ("Anthropic-Version", "2023-06-01"),
        ],
        &body.to_string(),
    );
    assert_eq!(server.request_count(), 1);
    let request = &server.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/messages?beta=true");
    assert_eq!(request.route(), "/v1/messages");
    assert_eq!(request.headers["x-api-key"], "sk-test");
    assert_eq!(request.header("Anthropic-Version"), Some("2023-06-01"));
    assert_eq!(request.body, body.to_string());
    assert_eq!(request.json.as_ref(), Some(&body));
    assert_eq!(request.model(), Some("claude-opus-5-5"));
    assert!(request.is_stream());
    assert_eq!(request.tool_names(), ["Write", "Bash"]);
    assert!(request.system_text().contains("You are a Claude agent."));
    assert!(request.body_contains("\"go\""));
}

#[test]
fn count_tokens_unknown_routes_and_api_keys() {
    let server = StandIn::builder().require_api_key("sk-test").start();
    let key = [("x-api-key", "sk-test")];
    let body =
        json!({"model": "m", "messages": [{"role": "user", "content": "hello"}]}).to_string();

    let counted = http(
        server.addr(),
        "POST",
        "/v1/messages/count_tokens",
        &key,
        &body,
    );
    assert_eq!(counted.status, 200);
    assert_eq!(counted.json(), json!({"input_tokens": tokens(body.len())}));

    let missing = http(server.addr(), "POST", "/v1/messages", &[], &body);
    assert_eq!(missing.status, 401);
    assert_eq!(missing.json()["type"], "error");
    assert_eq!(missing.json()["error"]["type"], "authentication_error");
    assert!(missing.json()["error"]["message"].is_string());
    let wrong = http(
        server.addr(),
        "POST",
        "/v1/messages",
        &[("x-api-key", "sk-nope")],
        &body,
    );
    assert_eq!(wrong.status, 401);
    let bearer = [("authorization", "Bearer sk-test")];
    assert_eq!(
        http(server.addr(), "POST", "/v1/messages", &bearer, &body).status,
        200
    );
    assert_eq!(
        http(server.addr(), "POST", "/v1/messages", &key, &body).status,
        200
    );
    let openai = http(server.addr(), "POST", "/v1/chat/completions", &[], &body);
    assert_eq!(openai.status, 401);
    assert_eq!(openai.json()["error"]["code"], "invalid_api_key");

    let unknown = http(server.addr(), "POST", "/v1/complete", &key, &body);
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["error"]["type"], "not_found_error");
    let get = http(server.addr(), "GET", "/v1/messages", &key, "");
    assert_eq!(get.status, 404);

    assert_eq!(server.request_count(), 8);
    // Only the two answered messages reported usage.
    assert_eq!(server.usage().replies, 2);
}

#[test]
fn responder_replies_raw_errors_delays_and_usage_overrides() {
    let server = StandIn::with_responder(|request| {
        let prompt = request.messages()[0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        match prompt.as_str() {
            "429" => Reply::rate_limited(7),
            "500" => Reply::server_error(),
            "529" => Reply::overloaded(),
            "garbage" => Reply::malformed_json(),
            "raw" => Reply::raw(418, "text/plain", "short and stout").with_header("x-extra", "1"),
            "slow" => Reply::text("finally").delayed(Duration::from_millis(300)),
            "counted" => Reply::text("abc").with_usage(1000, 50),
            "panic" => panic!("the responder panicked on purpose"),
            other => Reply::text(format!("you said {other}")),
        }
    });
    let ask = |prompt: &str| {
        post(
            server.addr(),
            "/v1/messages",
            &json!({"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": prompt}]}),
        )
    };

    let limited = ask("429");
    assert_eq!(limited.status, 429);
    assert_eq!(limited.headers["retry-after"], "7");
    assert_eq!(limited.json()["error"]["type"], "rate_limit_error");
    assert_eq!(ask("500").status, 500);
    assert_eq!(ask("529").json()["error"]["type"], "overloaded_error");
    let garbage = ask("garbage");
    assert_eq!(garbage.status, 200);
    assert!(serde_json::from_str::<Value>(&garbage.body).is_err());
    let raw = ask("raw");
    assert_eq!((raw.status, raw.body.as_str()), (418, "short and stout"));
    assert_eq!(raw.headers["content-type"], "text/plain");
    assert_eq!(raw.headers["x-extra"], "1");
    assert_eq!(
        server.usage(),
        Usage::default(),
        "raw replies report no usage"
    );

    let started = Instant::now();
    let slow = ask("slow");
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(slow.json()["content"][0]["text"], "finally");

    let counted = ask("counted").json();
    assert_eq!(
        counted["usage"],
        json!({"input_tokens": 1000, "output_tokens": 50})
    );
    assert_eq!(ask("panic").status, 500);
    assert_eq!(ask("hi").json()["content"][0]["text"], "you said hi");
}

#[test]
fn openai_chat_completions() {
    let server = StandIn::with_responder(|request| {
        let last = request.messages().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned();
        match last.as_str() {
            "tool" => Reply::tool_use("record_memory", json!({"title": "t", "tags": ["a"]})),
            "both" => Reply::message([
                Block::Text("Calling.".into()),
                Block::ToolUse {
                    name: "f".into(),
                    input: json!({"x": 1}),
                },
            ]),
            _ => Reply::text("plain answer"),
        }
    });
    let ask = |path: &str, extra: Value, prompt: &str| {
        let mut body = json!({"model": "gpt-test", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": prompt}]});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        post(server.addr(), path, &body)
    };

    let plain = ask("/v1/chat/completions", json!({}), "hi");
    assert_eq!(plain.status, 200);
    let plain = plain.json();
    assert_eq!(plain["object"], "chat.completion");
    assert_eq!(plain["model"], "gpt-test");
    assert!(plain["id"].as_str().unwrap().starts_with("chatcmpl-"));
    let choice = &plain["choices"][0];
    assert_eq!(choice["index"], 0);
    assert_eq!(choice["finish_reason"], "stop");
    assert_eq!(
        choice["message"],
        json!({"role": "assistant", "content": "plain answer"})
    );
    let usage = &plain["usage"];
    assert_eq!(usage["completion_tokens"], tokens("plain answer".len()));
    assert_eq!(
        usage["total_tokens"].as_u64().unwrap(),
        usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap()
    );

    // Without /v1 too; a tool call becomes tool_calls with string arguments.
    let tool = ask("/chat/completions", json!({"tools": []}), "tool").json();
    let message = &tool["choices"][0]["message"];
    assert_eq!(tool["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(message["content"], Value::Null);
    let call = &message["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert!(call["id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(call["function"]["name"], "record_memory");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"title": "t", "tags": ["a"]}));

    // With response_format the structured answer is the content.
    let format = json!({"response_format": {"type": "json_object"}});
    let structured = ask("/v1/chat/completions", format, "tool").json();
    let message = &structured["choices"][0]["message"];
    assert_eq!(structured["choices"][0]["finish_reason"], "stop");
    assert!(message.get("tool_calls").is_none());
    let content: Value = serde_json::from_str(message["content"].as_str().unwrap()).unwrap();
    assert_eq!(content, json!({"title": "t", "tags": ["a"]}));

    // Streamed: data lines, ending with [DONE].
    let streamed = ask(
        "/v1/chat/completions",
        json!({"stream": true, "stream_options": {"include_usage": true}}),
        "both",
    );
    assert_eq!(streamed.headers["content-type"], "text/event-stream");
    let chunks: Vec<&str> = streamed
        .body
        .trim_end()
        .split("\n\n")
        .map(|c| c.strip_prefix("data: ").expect("data: lines only"))
        .collect();
    assert_eq!(*chunks.last().unwrap(), "[DONE]");
    let chunks: Vec<Value> = chunks[..chunks.len() - 1]
        .iter()
        .map(|c| serde_json::from_str(c).unwrap())
        .collect();
    let mut content = String::new();
    let mut arguments = String::new();
    let mut name = String::new();
    let mut finish = Value::Null;
    for chunk in &chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        let Some(choice) = chunk["choices"].get(0) else {
            continue;
        };
        content.push_str(choice["delta"]["content"].as_str().unwrap_or_default());
        if let Some(call) = choice["delta"]["tool_calls"].get(0) {
            name.push_str(call["function"]["name"].as_str().unwrap_or_default());
            arguments.push_str(call["function"]["arguments"].as_str().unwrap_or_default());
        }
        if !choice["finish_reason"].is_null() {
            finish = choice["finish_reason"].clone();
        }
    }
    assert_eq!(content, "Calling.");
    assert_eq!(name, "f");
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).unwrap(),
        json!({"x": 1})
    );
    assert_eq!(finish, "tool_calls");
    let usage_chunk = chunks.last().unwrap();
    assert_eq!(usage_chunk["choices"], json!([]));
    assert!(usage_chunk["usage"]["total_tokens"].as_u64().unwrap() > 0);

    assert_eq!(server.usage().replies, 4);
    assert_eq!(server.requests()[1].route(), "/chat/completions");
    assert_eq!(server.requests()[0].system_text(), "be brief");
}

#[test]
fn waiting_for_requests_and_shutting_down() {
    let server = StandIn::with_script([]);
    let addr = server.addr();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        post(addr, "/v1/messages", &claude_request(false, 0));
    });
    let requests = server
        .wait_for_requests(1, Duration::from_secs(10))
        .unwrap();
    assert_eq!(requests.len(), 1);
    sender.join().unwrap();
    let err = server
        .wait_for_requests(2, Duration::from_millis(100))
        .unwrap_err();
    assert!(err.to_string().contains("got 1"), "{err}");

    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    assert_eq!(
        server.openai_base_url(),
        format!("{}/v1", server.base_url())
    );
    drop(server);
    assert!(
        TcpStream::connect(addr).is_err(),
        "the port is closed once the stand-in is dropped"
    );
}

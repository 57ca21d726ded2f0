//! The Gemini API (`generativelanguage`, `v1beta`) wire format, as Gemini CLI
//! 0.61 uses it with `GOOGLE_GEMINI_BASE_URL` pointing here.
//!
//! - `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`: the main
//!   conversation. Answered from the script (or responder) like the other
//!   routes, as `data: {"candidates": [...]}` events framed by `\r\n\r\n`
//!   (the framing of `shared/fixtures/platforms/gemini.streamGenerateContent.*.sse`).
//! - `POST /v1beta/models/<model>:generateContent`: Gemini CLI's own side
//!   questions (the model router, the next-speaker check), which expect a
//!   JSON object as text. [`side_answer`] satisfies both: the simplest
//!   route, and "the user speaks next".
//! - `POST /v1beta/models/<model>:countTokens`: `{"totalTokens": body / 4}`.

use serde_json::{Value, json};

use super::{OutBlock, Outgoing};

/// What a Gemini route asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Stream,
    Generate,
    CountTokens,
}

/// The method of a `/v1beta/models/<model>:<method>` path.
pub(super) fn method_of(route: &str) -> Option<Method> {
    let rest = route.strip_prefix("/v1beta/models/")?;
    match rest.rsplit_once(':')?.1 {
        "streamGenerateContent" => Some(Method::Stream),
        "generateContent" => Some(Method::Generate),
        "countTokens" => Some(Method::CountTokens),
        _ => None,
    }
}

/// The model named in a `/v1beta/models/<model>:<method>` path.
pub(super) fn model_of(route: &str) -> Option<&str> {
    route
        .strip_prefix("/v1beta/models/")?
        .rsplit_once(':')
        .map(|(model, _)| model)
}

/// The JSON text that answers Gemini CLI's side questions: the model router
/// (`complexity_score`) and the next-speaker check (`next_speaker`).
pub(super) fn side_answer() -> Value {
    let text = json!({
        "complexity_reasoning": "A scripted stand-in task.",
        "complexity_score": 10,
        "reasoning": "The scripted turn is complete.",
        "next_speaker": "user",
    })
    .to_string();
    response_json(&[json!({ "text": text })], 10, 10, "stand-in")
}

/// One answer as a `GenerateContentResponse`.
fn response_json(parts: &[Value], input: u64, output: u64, model: &str) -> Value {
    json!({
        "candidates": [{
            "content": { "role": "model", "parts": parts },
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {
            "promptTokenCount": input,
            "candidatesTokenCount": output,
            "totalTokenCount": input + output,
        },
        "modelVersion": model,
    })
}

fn parts_of(message: &Outgoing) -> Vec<Value> {
    message
        .blocks
        .iter()
        .map(|block| match block {
            OutBlock::Text(text) => json!({ "text": text }),
            OutBlock::ToolUse { id, name, input } => {
                json!({ "functionCall": { "id": id, "name": name, "args": input } })
            }
        })
        .collect()
}

/// The non-streamed answer.
pub(super) fn message_json(message: &Outgoing) -> Value {
    response_json(
        &parts_of(message),
        message.input_tokens,
        message.output_tokens,
        &message.model,
    )
}

/// The streamed answer: the whole message in one `data:` event.
pub(super) fn message_sse(message: &Outgoing) -> String {
    format!("data: {}\r\n\r\n", message_json(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_recognised() {
        let stream = "/v1beta/models/gemini-2.5-pro:streamGenerateContent";
        assert_eq!(method_of(stream), Some(Method::Stream));
        assert_eq!(model_of(stream), Some("gemini-2.5-pro"));
        assert_eq!(
            method_of("/v1beta/models/gemini-2.5-flash-lite:generateContent"),
            Some(Method::Generate)
        );
        assert_eq!(method_of("/v1/messages"), None);
        assert_eq!(method_of("/v1beta/models/x:embedContent"), None);
    }

    #[test]
    fn a_tool_call_streams_as_a_function_call() {
        let message = Outgoing {
            id: "1".into(),
            created: 0,
            model: "gemini-fake".into(),
            blocks: vec![OutBlock::ToolUse {
                id: "call_1".into(),
                name: "write_file".into(),
                input: json!({"file_path": "/p/a.py", "content": "x"}),
            }],
            input_tokens: 10,
            output_tokens: 5,
        };
        let sse = message_sse(&message);
        assert!(sse.starts_with("data: {") && sse.ends_with("}\r\n\r\n"));
        let event: Value = serde_json::from_str(&sse[6..sse.len() - 4]).unwrap();
        let call = &event["candidates"][0]["content"]["parts"][0]["functionCall"];
        assert_eq!(call["name"], "write_file");
        assert_eq!(call["args"]["file_path"], "/p/a.py");
        assert_eq!(event["candidates"][0]["finishReason"], "STOP");
    }
}

//! Bounding what a client may send: one JSON-RPC message per line, at most
//! [`MAX_REQUEST_BYTES`]. rmcp would drop a longer line without a word, and
//! the client would wait forever; instead, the line is replaced by a small
//! request for [`TOO_LARGE_METHOD`] with the same id (read from the line's
//! beginning), which the server answers with an error that gives the limit.
//! The oversized line is never held in memory whole.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// Largest message accepted (1 MiB: far more than any tool call needs).
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// The method an oversized request becomes; never sent by a real client.
pub const TOO_LARGE_METHOD: &str = "mnemo/request_too_large";

/// How much of an oversized line is kept to find its id.
const ID_WINDOW: usize = 4096;

/// Copies `input` to `output` line by line, replacing each line longer than
/// `limit` with a [`TOO_LARGE_METHOD`] request (or dropping it when it has
/// no id to answer). Ends at end of input or when `output` is closed.
pub async fn bound_lines(
    input: impl AsyncRead + Unpin,
    mut output: impl AsyncWrite + Unpin,
    limit: usize,
) -> std::io::Result<()> {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    let mut oversized: Option<usize> = None; // bytes of the line seen so far
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            if oversized.is_none() && !line.is_empty() {
                output.write_all(&line).await?;
            }
            return output.shutdown().await;
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        match oversized.as_mut() {
            Some(seen) => *seen += take,
            None if line.len() + take > limit => {
                oversized = Some(line.len() + take);
                let room = ID_WINDOW.saturating_sub(line.len());
                line.extend_from_slice(&available[..take.min(room)]);
            }
            None => line.extend_from_slice(&available[..take]),
        }
        input.consume(take);
        if newline.is_none() {
            continue;
        }
        match oversized.take() {
            None => output.write_all(&line).await?,
            Some(bytes) => {
                if let Some(stand_in) = stand_in(&line, bytes, limit) {
                    output.write_all(stand_in.as_bytes()).await?;
                }
            }
        }
        output.flush().await?;
        line.clear();
    }
}

/// The small request that stands in for an oversized one, if it has an id.
fn stand_in(head: &[u8], bytes: usize, limit: usize) -> Option<String> {
    let id = request_id(head)?;
    let message = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": TOO_LARGE_METHOD,
        "params": {"bytes": bytes, "limit": limit},
    });
    Some(format!("{message}\n"))
}

/// The `"id"` member of a JSON-RPC message from its first bytes: a number
/// or a string, as JSON. Looks only at the top level of the object.
fn request_id(head: &[u8]) -> Option<serde_json::Value> {
    let text = String::from_utf8_lossy(head);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            '"' if depth == 1 && text[i..].starts_with("\"id\"") => {
                return id_value(text[i + 4..].trim_start().strip_prefix(':')?);
            }
            '"' => in_string = true,
            _ => {}
        }
    }
    None
}

/// A JSON number or string at the start of `rest`.
fn id_value(rest: &str) -> Option<serde_json::Value> {
    let mut values =
        serde_json::Deserializer::from_str(rest.trim_start()).into_iter::<serde_json::Value>();
    match values.next()? {
        // A number followed by `,` fails as a stream item; parse up to it.
        Ok(v @ (serde_json::Value::Number(_) | serde_json::Value::String(_))) => Some(v),
        _ => {
            let rest = rest.trim_start();
            let end = rest.find([',', '}', ' ']).unwrap_or(rest.len());
            let v: serde_json::Value = serde_json::from_str(&rest[..end]).ok()?;
            (v.is_number() || v.is_string()).then_some(v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_found_at_the_top_level_only() {
        assert_eq!(
            request_id(br#"{"jsonrpc":"2.0","id":7,"method":"x"#),
            Some(json!(7))
        );
        assert_eq!(request_id(br#"{"id": "a\"b", "x": 1"#), Some(json!("a\"b")));
        assert_eq!(
            request_id(br#"{"params":{"id":1},"text":"\"id\":2","id":3,"#),
            Some(json!(3))
        );
        assert_eq!(request_id(br#"{"method":"x","params":{"id":1"#), None);
    }

    #[tokio::test]
    async fn an_oversized_line_becomes_a_small_request_with_its_id() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":{{\"x\":\"{}\"}}}}\n",
            "a".repeat(5000)
        );
        let input = format!("{{\"id\":1}}\n{big}{{\"id\":2}}\n");
        let mut out = Vec::new();
        bound_lines(input.as_bytes(), &mut out, 1000).await.unwrap();
        let lines: Vec<serde_json::Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1]["id"], 42);
        assert_eq!(lines[1]["method"], TOO_LARGE_METHOD);
        assert_eq!(lines[1]["params"]["bytes"], big.len());
        assert_eq!(lines[2]["id"], 2);
    }
}

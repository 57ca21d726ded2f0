//! The OpenAI-compatible `/embeddings` client: `POST {base_url}/embeddings`
//! with `{"model", "input": [...]}`, a bearer key when one is configured,
//! and an answer read strictly. `data[].embedding` is put back in input
//! order by `index`; an answer that is not JSON (an HTML error page), has
//! the wrong count, a missing or repeated index, a non-finite or all-zero
//! vector, or vectors of different lengths is an error that says which,
//! and nothing of it is used.

use std::time::Duration;

use mnemo_core::config::EmbeddingsConfig;
use serde_json::{Value, json};

/// A client for one endpoint and model.
#[derive(Clone)]
pub struct Embedder {
    client: reqwest::Client,
    url: String,
    model: String,
    key: Option<String>,
    timeout: Duration,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("key", &self.key.as_ref().map(|_| "***"))
            .finish()
    }
}

/// Whether a base URL is plain HTTP (no TLS).
fn plain_http(base_url: &str) -> bool {
    base_url
        .trim()
        .get(..7)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
}

impl Embedder {
    /// A client for the configured endpoint, each call bounded by
    /// `timeout`; None when embeddings are off, an error when the settings
    /// are broken.
    pub fn from_config(
        config: &EmbeddingsConfig,
        timeout: Duration,
    ) -> Result<Option<Embedder>, String> {
        if !config.requested() {
            return Ok(None);
        }
        config.check()?;
        // Fails only when a provider is already installed, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .user_agent(concat!("mnemo/", env!("CARGO_PKG_VERSION")));
        if plain_http(&config.base_url) {
            // No TLS to a plain-HTTP endpoint (a model served on this
            // machine), so the system's certificates are not loaded: that
            // read hundreds of files on every search.
            builder = builder.tls_certs_only(std::iter::empty());
        }
        let client = builder
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Some(Embedder {
            client,
            url: format!(
                "{}/embeddings",
                config.base_url.trim().trim_end_matches('/')
            ),
            model: config.model.trim().to_owned(),
            key: config.api_key(),
            timeout,
        }))
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// One vector per input, in input order.
    pub async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, String> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let mut request = self
            .client
            .post(&self.url)
            .json(&json!({ "model": self.model, "input": inputs }));
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let answer = request.send().await.map_err(|e| self.describe(e))?;
        let status = answer.status();
        let body = answer.text().await.map_err(|e| self.describe(e))?;
        if !status.is_success() {
            return Err(format!(
                "{} answered {status}: {}",
                self.url,
                excerpt(&self.mask(&body))
            ));
        }
        parse_answer(&body, inputs.len()).map_err(|e| format!("{}: {e}", self.url))
    }

    fn describe(&self, e: reqwest::Error) -> String {
        let what = if e.is_timeout() {
            format!("no answer within {} ms", self.timeout.as_millis())
        } else if e.is_connect() {
            "cannot connect".to_owned()
        } else {
            e.to_string()
        };
        format!("{}: {}", self.url, self.mask(&what))
    }

    fn mask(&self, text: &str) -> String {
        match &self.key {
            Some(key) if key.len() >= 4 => text.replace(key.as_str(), "***"),
            _ => text.to_owned(),
        }
    }
}

/// The first line of a body, shortened: enough to recognise an error page.
fn excerpt(body: &str) -> String {
    let line = body.trim().lines().next().unwrap_or("");
    let mut out: String = line.chars().take(120).collect();
    if line.chars().count() > 120 {
        out.push('…');
    }
    if out.is_empty() {
        "(empty body)".to_owned()
    } else {
        out
    }
}

/// Reads an `/embeddings` answer for `expected` inputs.
pub fn parse_answer(body: &str, expected: usize) -> Result<Vec<Vec<f32>>, String> {
    let value: Value = serde_json::from_str(body)
        .map_err(|_| format!("the answer is not JSON: {}", excerpt(body)))?;
    let data = value
        .get("data")
        .and_then(Value::as_array)
        .ok_or("the answer has no `data` list")?;
    if data.len() != expected {
        return Err(format!(
            "the answer has {} vectors for {expected} inputs",
            data.len()
        ));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in data.iter().enumerate() {
        let index = match item.get("index") {
            None => position,
            Some(i) => i
                .as_u64()
                .map(|i| i as usize)
                .filter(|&i| i < expected)
                .ok_or_else(|| format!("vector {position} has a bad index {i}"))?,
        };
        if out[index].is_some() {
            return Err(format!("index {index} is given twice"));
        }
        out[index] = Some(vector_of(item, index)?);
    }
    let out: Vec<Vec<f32>> = out.into_iter().flatten().collect();
    let dim = out[0].len();
    if let Some(other) = out.iter().find(|v| v.len() != dim) {
        return Err(format!(
            "vectors of different lengths ({dim} and {})",
            other.len()
        ));
    }
    Ok(out)
}

fn vector_of(item: &Value, index: usize) -> Result<Vec<f32>, String> {
    let numbers = item
        .get("embedding")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("vector {index} has no `embedding` list of numbers"))?;
    if numbers.is_empty() {
        return Err(format!("vector {index} is empty"));
    }
    let mut v = Vec::with_capacity(numbers.len());
    for n in numbers {
        let x = n
            .as_f64()
            .map(|x| x as f32)
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("vector {index} holds {n}, not a finite number"))?;
        v.push(x);
    }
    if v.iter().all(|&x| x == 0.0) {
        return Err(format!("vector {index} is all zeros"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_http_endpoint_goes_without_tls_roots() {
        for url in ["http://127.0.0.1:11434/v1", " HTTP://localhost:1234/v1"] {
            assert!(plain_http(url), "{url}");
        }
        for url in ["https://api.openai.com/v1", "", "http", "ftp://x"] {
            assert!(!plain_http(url), "{url}");
        }
    }

    #[test]
    fn vectors_come_back_in_input_order() {
        let body = r#"{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}"#;
        assert_eq!(
            parse_answer(body, 2).unwrap(),
            vec![vec![1.0, 0.0], vec![0.0, 1.0]]
        );
    }

    #[test]
    fn garbage_is_an_error_that_says_what() {
        let cases = [
            ("<html><body>502 Bad Gateway</body></html>", 1, "not JSON"),
            (r#"{"data":[]}"#, 1, "0 vectors for 1"),
            (r#"{"data":[{"embedding":[1, "x"]}]}"#, 1, "not a finite"),
            (r#"{"data":[{"embedding":[0, 0]}]}"#, 1, "all zeros"),
            (
                r#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}"#,
                2,
                "twice",
            ),
            (
                r#"{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}"#,
                2,
                "different lengths",
            ),
            (r#"{"error":"no such model"}"#, 1, "no `data`"),
        ];
        for (body, n, says) in cases {
            let e = parse_answer(body, n).unwrap_err();
            assert!(e.contains(says), "{body}: {e}");
        }
    }
}

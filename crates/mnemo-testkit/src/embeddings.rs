//! [`EmbeddingsStandIn`]: a stand-in OpenAI-compatible `/embeddings`
//! endpoint on `127.0.0.1`, for search by meaning.
//!
//! Its vectors are deterministic "concept buckets": each word of an input
//! adds 1 to one of `dim` buckets. Words of a group the test declares
//! (say `car`, `automobile`, `vehicle`) share a bucket of their own, so a
//! query and a record with no word in common but words of one group come
//! out near each other; any other word lands in a bucket chosen by its hash
//! (outside the groups' buckets). The answer is the real format
//! (`data[].embedding` with `index`, given in reverse order to test that
//! clients sort by index), and [`Mode`] turns it into a failure: down, HTML,
//! the wrong count, NaN, slow. Every request's model and input count are
//! recorded.
//!
//! Plain std: one thread accepting, one per connection, `Connection: close`.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// How the stand-in answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Vectors as described above.
    Ok,
    /// `502` with an HTML error page.
    Html,
    /// `200` with one vector fewer than inputs.
    WrongCount,
    /// `200` with `NaN` in a vector (not valid JSON, as some servers send it).
    NaN,
    /// Waits this long before answering properly.
    Slow(Duration),
}

/// One request as received.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub model: String,
    pub inputs: Vec<String>,
}

struct Shared {
    groups: Vec<Vec<String>>,
    dim: usize,
    mode: Mutex<Mode>,
    seen: Mutex<Vec<Seen>>,
    stop: AtomicBool,
}

pub struct EmbeddingsStandIn {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl EmbeddingsStandIn {
    /// Starts a stand-in of `dim` buckets where each of `groups` shares one.
    pub fn start(groups: &[&[&str]], dim: usize) -> EmbeddingsStandIn {
        assert!(
            dim > groups.len() + 1,
            "room for the groups and other words"
        );
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            groups: groups
                .iter()
                .map(|g| g.iter().map(|w| w.to_lowercase()).collect())
                .collect(),
            dim,
            mode: Mutex::new(Mode::Ok),
            seen: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let s = shared.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(conn) = conn {
                    let s = s.clone();
                    std::thread::spawn(move || serve(conn, &s));
                }
            }
        });
        EmbeddingsStandIn { addr, shared }
    }

    /// `http://127.0.0.1:PORT/v1`, as `[embeddings] base_url` takes it.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn set_mode(&self, mode: Mode) {
        *self.shared.mode.lock().unwrap() = mode;
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// The vector this stand-in gives `text` (for assertions).
    pub fn vector(&self, text: &str) -> Vec<f32> {
        vector(&self.shared, text)
    }
}

impl Drop for EmbeddingsStandIn {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accepting thread so that it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn vector(s: &Shared, text: &str) -> Vec<f32> {
    let mut v = vec![0.0_f32; s.dim];
    let words = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase);
    for word in words {
        let bucket = match s.groups.iter().position(|g| g.contains(&word)) {
            Some(g) => g,
            None => {
                let mut h = DefaultHasher::new();
                word.hash(&mut h);
                s.groups.len() + (h.finish() as usize) % (s.dim - s.groups.len())
            }
        };
        v[bucket] += 1.0;
    }
    if v.iter().all(|&x| x == 0.0) {
        v[s.dim - 1] = 1.0;
    }
    v
}

fn serve(mut conn: TcpStream, s: &Shared) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(body) = read_request(&conn) else {
        return;
    };
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let model = request["model"].as_str().unwrap_or("").to_owned();
    let inputs: Vec<String> = match &request["input"] {
        Value::String(one) => vec![one.clone()],
        Value::Array(many) => many
            .iter()
            .map(|v| v.as_str().unwrap_or("").to_owned())
            .collect(),
        _ => Vec::new(),
    };
    s.seen.lock().unwrap().push(Seen {
        model: model.clone(),
        inputs: inputs.clone(),
    });
    let mode = *s.mode.lock().unwrap();
    let (status, kind, body) = match mode {
        Mode::Html => (
            "502 Bad Gateway",
            "text/html",
            "<html><body><h1>502 Bad Gateway</h1></body></html>".to_owned(),
        ),
        Mode::WrongCount => (
            "200 OK",
            "application/json",
            answer(s, &inputs[1..], &model),
        ),
        Mode::NaN => (
            "200 OK",
            "application/json",
            r#"{"data":[{"index":0,"embedding":[NaN, 1.0]}]}"#.to_owned(),
        ),
        Mode::Slow(wait) => {
            std::thread::sleep(wait);
            ("200 OK", "application/json", answer(s, &inputs, &model))
        }
        Mode::Ok => ("200 OK", "application/json", answer(s, &inputs, &model)),
    };
    let _ = write!(
        conn,
        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
}

fn answer(s: &Shared, inputs: &[String], model: &str) -> String {
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": vector(s, text)}))
        .collect();
    json!({"object": "list", "model": model, "data": data}).to_string()
}

/// The body of one HTTP/1.1 request (by `content-length`).
fn read_request(conn: &TcpStream) -> Option<Vec<u8>> {
    let mut reader = BufReader::new(conn);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

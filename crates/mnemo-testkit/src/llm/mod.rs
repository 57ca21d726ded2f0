//! [`StandIn`]: a scripted stand-in for LLM provider APIs, served over real
//! HTTP on `127.0.0.1`.
//!
//! Claude Code and mnemo's worker talk to an LLM over HTTP; the tests point
//! them at a `StandIn` instead, so that they run offline and deterministically
//! while the clients under test stay real. The server runs on its own thread
//! with its own tokio runtime (usable from synchronous `#[test]`s) and stops
//! when the `StandIn` is dropped.
//!
//! Routes:
//! - `POST /v1/messages` (any query, e.g. `?beta=true`): Anthropic Messages,
//!   as JSON or, with `"stream": true`, as server-sent events.
//! - `POST /v1/messages/count_tokens`: `{"input_tokens": body bytes / 4}`.
//! - `POST /v1/chat/completions` and `POST /chat/completions`: OpenAI-compatible
//!   chat completions, as JSON or `data:` chunks ending with `data: [DONE]`.
//! - `POST /v1beta/models/<model>:streamGenerateContent` (and
//!   `:generateContent`, `:countTokens`): the Gemini API, for Gemini CLI
//!   (see [`gemini`]).
//! - `POST /v1/responses` and `POST /responses`: OpenAI Responses, as the
//!   events Codex CLI streams (see `responses.rs`).
//! - anything else: `404` with a JSON error.
//!
//! Every request is recorded before it is answered ([`StandIn::requests`]).
//! Answers come from a script of [`Step`]s (to drive Claude Code; see
//! [`StandInBuilder::script`]) or from a closure returning a [`Reply`] (to play
//! a provider; see [`StandInBuilder::responder`]). Reported usage is
//! `ceil(request body bytes / 4)` input tokens and `ceil(reply text bytes / 4)`
//! output tokens (text blocks plus the JSON of tool inputs), unless the reply
//! overrides it; [`StandIn::usage`] keeps the totals.

mod anthropic;
mod gemini;
mod openai;
mod reply;
mod request;
mod responses;

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener as StdTcpListener};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::oneshot;

pub use reply::{Block, Reply, Step};
pub use request::RecordedRequest;

use reply::Script;

/// The biggest request body the stand-in reads (Claude Code's first request
/// is about 50 KB; long sessions grow).
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// Token usage the stand-in has reported so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Sum of reported input tokens.
    pub input_tokens: u64,
    /// Sum of reported output tokens.
    pub output_tokens: u64,
    /// How many model answers (Anthropic messages or chat completions, not
    /// `Raw` replies or errors) reported usage.
    pub replies: u64,
}

/// A closure that answers a request.
type Responder = Arc<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>;

/// How answers are chosen.
enum Mode {
    Script(Script),
    Responder(Responder),
}

/// Configures and starts a [`StandIn`].
pub struct StandInBuilder {
    steps: Vec<Step>,
    final_text: String,
    side_text: String,
    responder: Option<Responder>,
    api_key: Option<String>,
}

impl Default for StandInBuilder {
    fn default() -> Self {
        StandInBuilder {
            steps: Vec::new(),
            final_text: "Done.".to_owned(),
            side_text: "OK.".to_owned(),
            responder: None,
            api_key: None,
        }
    }
}

impl StandInBuilder {
    /// Answer with a script (the default mode, with no steps): the step for a
    /// request is chosen by how many tool results its conversation carries
    /// (so a retried request gets the same answer; see [`Step`]), after the
    /// last step comes the final text (end of turn), and side requests (no
    /// `tools`, a subagent, ...; see [`RecordedRequest::is_side_request`])
    /// get the side text without using a step. Replaces a responder.
    pub fn script(mut self, steps: impl IntoIterator<Item = Step>) -> Self {
        self.steps = steps.into_iter().collect();
        self.responder = None;
        self
    }

    /// The text that ends a script after its last step (default "Done.").
    pub fn final_text(mut self, text: impl Into<String>) -> Self {
        self.final_text = text.into();
        self
    }

    /// The text that answers side requests in script mode (default "OK.").
    pub fn side_text(mut self, text: impl Into<String>) -> Self {
        self.side_text = text.into();
        self
    }

    /// Answer every model request (Anthropic messages and chat completions)
    /// with what `responder` returns, instead of a script. It runs on the
    /// server's threads, so it should be quick (use [`Reply::delayed`] to be
    /// slow); if it panics the client gets a `500`.
    pub fn responder(
        mut self,
        responder: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
    ) -> Self {
        self.responder = Some(Arc::new(responder));
        self
    }

    /// Reject requests whose `x-api-key` or `Authorization: Bearer` is not
    /// `key` with a `401` (an Anthropic `authentication_error`; an OpenAI
    /// `invalid_api_key` error on the chat-completions route).
    pub fn require_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Binds `127.0.0.1:0` and starts serving.
    ///
    /// # Panics
    /// If the loopback socket or the runtime cannot be created: a broken test
    /// machine, not something a test can handle.
    pub fn start(self) -> StandIn {
        let listener = StdTcpListener::bind("127.0.0.1:0").expect("stand-in: bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("stand-in: set the listener non-blocking");
        let addr = listener.local_addr().expect("stand-in: local address");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("stand-in")
            .enable_all()
            .build()
            .expect("stand-in: build the tokio runtime");
        let mode = match self.responder {
            Some(responder) => Mode::Responder(responder),
            None => Mode::Script(Script {
                steps: self.steps,
                final_text: self.final_text,
                side_text: self.side_text,
            }),
        };
        let shared = Arc::new(Shared {
            mode,
            api_key: self.api_key,
            state: Mutex::new(Recorded::default()),
            changed: Condvar::new(),
        });
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let thread = std::thread::Builder::new()
            .name(format!("stand-in-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener)
                        .expect("stand-in: register the listener with tokio");
                    let serve = axum::serve(listener, app);
                    tokio::select! {
                        result = serve => {
                            if let Err(err) = result {
                                eprintln!("stand-in on {addr}: server error: {err}");
                            }
                        }
                        _ = stop_rx => {}
                    }
                });
                // Drops open connections and any reply still being delayed.
                runtime.shutdown_background();
            })
            .expect("stand-in: spawn the server thread");
        StandIn {
            addr,
            shared,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }
}

/// A running stand-in LLM server on `127.0.0.1`; shut down on drop.
pub struct StandIn {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for StandIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StandIn")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl StandIn {
    /// A builder; see its methods for the modes.
    pub fn builder() -> StandInBuilder {
        StandInBuilder::default()
    }

    /// Starts a stand-in that plays `steps` (see [`StandInBuilder::script`]).
    pub fn with_script(steps: impl IntoIterator<Item = Step>) -> StandIn {
        StandIn::builder().script(steps).start()
    }

    /// Starts a stand-in that answers with `responder` (see
    /// [`StandInBuilder::responder`]).
    pub fn with_responder(
        responder: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
    ) -> StandIn {
        StandIn::builder().responder(responder).start()
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`: the value for `ANTHROPIC_BASE_URL`, or an
    /// OpenAI-compatible base URL (both `/chat/completions` and
    /// `/v1/chat/completions` are served).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`: an OpenAI-style base URL.
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// How many requests have been received.
    pub fn request_count(&self) -> usize {
        self.shared.lock().requests.len()
    }

    /// Waits until at least `count` requests have been received and returns
    /// them all; an error after `timeout` says how many arrived.
    pub fn wait_for_requests(
        &self,
        count: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<RecordedRequest>> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        while state.requests.len() < count {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                anyhow::bail!(
                    "stand-in on {}: waited {timeout:?} for {count} requests, got {}",
                    self.addr,
                    state.requests.len()
                );
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        Ok(state.requests.clone())
    }

    /// Token usage reported so far (see the module docs for how it is
    /// computed).
    pub fn usage(&self) -> Usage {
        self.shared.lock().usage
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// State shared between the server and the test.
struct Shared {
    mode: Mode,
    api_key: Option<String>,
    state: Mutex<Recorded>,
    changed: Condvar,
}

#[derive(Default)]
struct Recorded {
    requests: Vec<RecordedRequest>,
    usage: Usage,
}

impl Shared {
    /// The state, even if a thread panicked while holding it (a panicking
    /// test must still be able to print what was recorded).
    fn lock(&self) -> MutexGuard<'_, Recorded> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn record(&self, request: RecordedRequest) {
        self.lock().requests.push(request);
        self.changed.notify_all();
    }

    fn add_usage(&self, input_tokens: u64, output_tokens: u64) {
        let mut state = self.lock();
        state.usage.input_tokens += input_tokens;
        state.usage.output_tokens += output_tokens;
        state.usage.replies += 1;
    }

    fn authorized(&self, request: &RecordedRequest) -> bool {
        let Some(key) = &self.api_key else {
            return true;
        };
        let bearer = request
            .header("authorization")
            .and_then(|v| v.strip_prefix("Bearer "));
        request.header("x-api-key") == Some(key.as_str())
            || request.header("x-goog-api-key") == Some(key.as_str())
            || bearer == Some(key.as_str())
    }

    /// The reply the mode chooses; a panicking responder becomes a `500`.
    fn choose(&self, request: &RecordedRequest) -> Reply {
        match &self.mode {
            Mode::Script(script) => script.reply_to(request),
            Mode::Responder(responder) => {
                std::panic::catch_unwind(AssertUnwindSafe(|| responder(request))).unwrap_or_else(
                    |_| Reply::error(500, "api_error", "stand-in: the test's responder panicked"),
                )
            }
        }
    }
}

/// The routes the stand-in serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Messages,
    CountTokens,
    ChatCompletions,
    GeminiStream,
    GeminiGenerate,
    GeminiCountTokens,
    Responses,
    NotFound,
}

impl Route {
    fn of(request: &RecordedRequest) -> Route {
        if request.method != "POST" {
            return Route::NotFound;
        }
        match request.route() {
            "/v1/messages" => Route::Messages,
            "/v1/messages/count_tokens" => Route::CountTokens,
            "/v1/chat/completions" | "/chat/completions" => Route::ChatCompletions,
            "/v1/responses" | "/responses" => Route::Responses,
            other => match gemini::method_of(other) {
                Some(gemini::Method::Stream) => Route::GeminiStream,
                Some(gemini::Method::Generate) => Route::GeminiGenerate,
                Some(gemini::Method::CountTokens) => Route::GeminiCountTokens,
                None => Route::NotFound,
            },
        }
    }
}

/// A model answer ready to be rendered: ids assigned, usage settled.
pub(crate) struct Outgoing {
    id: String,
    created: u64,
    model: String,
    blocks: Vec<OutBlock>,
    input_tokens: u64,
    output_tokens: u64,
}

impl Outgoing {
    fn has_tool_use(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| matches!(b, OutBlock::ToolUse { .. }))
    }
}

/// A content block with its tool-call id.
pub(crate) enum OutBlock {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
}

/// A reply with delays waited out and wrappers removed.
enum Settled {
    Message {
        blocks: Vec<Block>,
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
    },
    Raw {
        status: u16,
        content_type: String,
        body: String,
        headers: Vec<(String, String)>,
    },
}

async fn settle(mut reply: Reply) -> Settled {
    let (mut input_override, mut output_override) = (None, None);
    loop {
        let blocks = match reply {
            Reply::Delay(delay, inner) => {
                tokio::time::sleep(delay).await;
                reply = *inner;
                continue;
            }
            Reply::WithUsage {
                input_tokens,
                output_tokens,
                reply: inner,
            } => {
                input_override = input_override.or(input_tokens);
                output_override = output_override.or(output_tokens);
                reply = *inner;
                continue;
            }
            Reply::Raw {
                status,
                content_type,
                body,
                headers,
            } => {
                return Settled::Raw {
                    status,
                    content_type,
                    body,
                    headers,
                };
            }
            Reply::Text(text) => vec![Block::Text(text)],
            Reply::ToolUse { name, input } => vec![Block::ToolUse { name, input }],
            Reply::Message(blocks) => blocks,
        };
        return Settled::Message {
            blocks,
            input_tokens: input_override,
            output_tokens: output_override,
        };
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

fn tokens_for(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(err) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                anthropic_error("invalid_request_error", &format!("unreadable body: {err}")),
            );
        }
    };
    let request = record_of(&parts, &body);
    shared.record(request.clone());
    let route = Route::of(&request);

    if !shared.authorized(&request) {
        let body = if matches!(route, Route::ChatCompletions | Route::Responses) {
            json!({"error": {"message": "stand-in: incorrect API key provided",
                             "type": "invalid_request_error", "param": null,
                             "code": "invalid_api_key"}})
        } else {
            anthropic_error("authentication_error", "stand-in: invalid x-api-key")
        };
        return json_response(StatusCode::UNAUTHORIZED, body);
    }

    match route {
        Route::CountTokens => json_response(
            StatusCode::OK,
            json!({"input_tokens": tokens_for(request.body_len())}),
        ),
        Route::GeminiCountTokens => json_response(
            StatusCode::OK,
            json!({"totalTokens": tokens_for(request.body_len())}),
        ),
        Route::GeminiGenerate => json_response(StatusCode::OK, gemini::side_answer()),
        Route::NotFound => json_response(
            StatusCode::NOT_FOUND,
            anthropic_error(
                "not_found_error",
                &format!(
                    "stand-in: no route for {} {}",
                    request.method,
                    request.route()
                ),
            ),
        ),
        Route::Messages | Route::ChatCompletions | Route::Responses | Route::GeminiStream => {
            let reply = shared.choose(&request);
            match settle(reply).await {
                Settled::Raw {
                    status,
                    content_type,
                    body,
                    headers,
                } => raw_response(status, &content_type, body, &headers),
                Settled::Message {
                    blocks,
                    input_tokens,
                    output_tokens,
                } => {
                    let message = outgoing(&request, route, blocks, input_tokens, output_tokens);
                    shared.add_usage(message.input_tokens, message.output_tokens);
                    render(&request, route, &message)
                }
            }
        }
    }
}

fn record_of(parts: &axum::http::request::Parts, body: &Bytes) -> RecordedRequest {
    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in &parts.headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers
            .entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let body = String::from_utf8_lossy(body).into_owned();
    RecordedRequest {
        method: parts.method.as_str().to_owned(),
        path: parts
            .uri
            .path_and_query()
            .map(|pq| pq.as_str().to_owned())
            .unwrap_or_else(|| parts.uri.path().to_owned()),
        headers,
        json: serde_json::from_str(&body).ok(),
        body,
    }
}

fn outgoing(
    request: &RecordedRequest,
    route: Route,
    blocks: Vec<Block>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
) -> Outgoing {
    let id = next_id();
    let mut text_bytes = 0;
    let blocks: Vec<OutBlock> = blocks
        .into_iter()
        .map(|block| match block {
            Block::Text(text) => {
                text_bytes += text.len();
                OutBlock::Text(text)
            }
            Block::ToolUse { name, input } => {
                text_bytes += input.to_string().len();
                let tool_id = match route {
                    Route::ChatCompletions | Route::Responses => {
                        format!("call_standin{:012}", next_id())
                    }
                    _ => format!("toolu_01StandIn{:012}", next_id()),
                };
                OutBlock::ToolUse {
                    id: tool_id,
                    name,
                    input,
                }
            }
        })
        .collect();
    Outgoing {
        id: match route {
            Route::ChatCompletions => format!("chatcmpl-standin{id:012}"),
            _ => format!("msg_01StandIn{id:012}"),
        },
        created: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        model: request
            .model()
            .or_else(|| gemini::model_of(request.route()))
            .unwrap_or("stand-in-model")
            .to_owned(),
        blocks,
        input_tokens: input_tokens.unwrap_or_else(|| tokens_for(request.body_len())),
        output_tokens: output_tokens.unwrap_or_else(|| tokens_for(text_bytes)),
    }
}

fn render(request: &RecordedRequest, route: Route, message: &Outgoing) -> Response {
    match (route, request.is_stream()) {
        (Route::GeminiStream, _) => event_stream_response(gemini::message_sse(message)),
        (Route::Responses, _) => event_stream_response(responses::response_sse(message)),
        (Route::ChatCompletions, false) => {
            json_response(StatusCode::OK, openai::completion_json(message, request))
        }
        (Route::ChatCompletions, true) => {
            event_stream_response(openai::completion_sse(message, request))
        }
        (_, false) => json_response(StatusCode::OK, anthropic::message_json(message)),
        (_, true) => event_stream_response(anthropic::message_sse(message)),
    }
}

fn anthropic_error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

fn json_response(status: StatusCode, body: Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .expect("static response parts are valid")
}

/// The whole event stream in one body: the events are framed by the text, so
/// how the bytes are chunked on the wire does not matter to clients.
fn event_stream_response(body: String) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .header(header::CONNECTION, "close")
        .body(Body::from(body))
        .expect("static response parts are valid")
}

fn raw_response(
    status: u16,
    content_type: &str,
    body: String,
    headers: &[(String, String)],
) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let map = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(content_type) {
        map.insert(header::CONTENT_TYPE, value);
    }
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            map.append(name, value);
        }
    }
    response
}

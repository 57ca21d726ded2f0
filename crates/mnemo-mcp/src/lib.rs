//! The MCP server: `mnemo mcp`, on stdio, with rmcp.
//!
//! Six tools over the same library as the CLI ([`mnemo_recall`]):
//! `search`, `timeline` and `get_observations` are the agent's three-step
//! workflow (find ids cheaply, look around one, fetch the few worth reading
//! in full); `save_memory` keeps something the agent wants future sessions to
//! know; `correct` fixes or forgets an observation of the current project
//! that turned out wrong ([`mnemo_recall::curate`], as `mnemo edit|forget`);
//! `context` is the index a session starts with.
//!
//! The server reads the database directly and needs no worker. It opens the
//! database per call (read-only, except for `save_memory` and `correct`), which costs a
//! fraction of a millisecond and means that a database created after the
//! server started is found, and that the server never holds a lock between
//! calls. A missing database is an answer ("nothing captured yet"), not an
//! error. The current project is `CLAUDE_PROJECT_DIR` (which Claude Code
//! gives its MCP servers), else the working directory.
//!
//! Limits: a request larger than [`frame::MAX_REQUEST_BYTES`] gets an error
//! answer (rmcp alone would drop it silently); `get_observations` takes at
//! most [`MAX_IDS`] ids; `save_memory` writes only into the current project
//! unless `[mcp] save_to_other_projects` says otherwise.
//!
//! stdout carries protocol messages only (rmcp owns it); nothing here prints.

pub mod frame;
mod params;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mnemo_core::privacy::Sanitizer;
use mnemo_core::{Config, DataDir};
use mnemo_recall::context::{ContextRequest, build, nothing_yet};
use mnemo_recall::hybrid;
use mnemo_recall::render::{self, Style};
use mnemo_recall::scope::{self, Resolved};
use mnemo_recall::search::{FileFilter, SearchRequest};
use mnemo_recall::{Clock, ItemRef, RecallError, agents, curate, records, save, timeline};
use mnemo_store::Store;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, CustomRequest, CustomResult, Implementation, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};

pub use params::{
    ContextParams, CorrectParams, GetObservationsParams, IdArg, SaveMemoryParams, SearchParams,
    TimelineParams,
};

/// The server's name in `mcpServers` and in tool names (`mcp__mnemo__search`).
pub const SERVER_NAME: &str = "mnemo";

/// Most ids one `get_observations` call may ask for.
pub const MAX_IDS: usize = 100;

/// What every tool shares.
#[derive(Debug, Clone)]
pub struct Options {
    pub data: DataDir,
    pub config: Config,
    /// The local offset, read before the runtime started threads.
    pub clock: Clock,
    /// The current project's directory.
    pub project_dir: PathBuf,
    /// The host's session, to link saved memories to (`CLAUDE_CODE_SESSION_ID`).
    pub session_id: Option<String>,
}

impl Options {
    /// From the process environment: `CLAUDE_PROJECT_DIR` or the working
    /// directory, and `CLAUDE_CODE_SESSION_ID`. Call before starting threads.
    pub fn from_env(data: DataDir, config: Config) -> Options {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let project_dir = var("CLAUDE_PROJECT_DIR")
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        Options {
            data,
            config,
            clock: Clock::system(),
            project_dir,
            session_id: var("CLAUDE_CODE_SESSION_ID"),
        }
    }
}

const INSTRUCTIONS: &str = "mnemo is this project's memory of earlier coding-agent sessions \
(observations of work done, per-turn summaries, user prompts). Work in three steps: \
1) search: one cheap line per hit, with ids (#12 observation, S3 turn summary, P7 prompt); \
2) timeline with one id: what happened before and after it; \
3) get_observations with the few ids worth reading in full. \
save_memory keeps a decision, convention or gotcha for future sessions; \
context shows the index this session started with.";

/// The MCP server.
#[derive(Clone)]
pub struct MnemoServer {
    options: Arc<Options>,
    tool_router: ToolRouter<Self>,
}

/// Why a tool could not answer: the text the agent gets, and whether it is
/// an error (bad input) or just a state of the world (no memory yet).
enum Refusal {
    Error(String),
    Note(String),
}

impl From<RecallError> for Refusal {
    fn from(e: RecallError) -> Refusal {
        Refusal::Error(e.to_string())
    }
}

/// A tool's answer: the text the agent reads, or, when the call asked for
/// `format: "json"`, the result as JSON (in `structuredContent` and as the
/// text), the shape of `mnemo search|timeline|show --json` and of the HTTP
/// API. Text is the default: it is what an agent weighs at the least cost.
struct Answer {
    text: String,
    data: Option<serde_json::Value>,
}

impl Answer {
    /// `text`, or `data` as JSON when `json`.
    fn either(json: bool, text: impl FnOnce() -> String, data: &impl serde::Serialize) -> Answer {
        if !json {
            return text().into();
        }
        match serde_json::to_value(data) {
            Ok(value) => Answer {
                text: value.to_string(),
                data: Some(value),
            },
            Err(e) => format!("cannot serialize the result: {e}").into(),
        }
    }
}

impl From<String> for Answer {
    fn from(text: String) -> Answer {
        Answer { text, data: None }
    }
}

/// Whether a call's `format` asks for JSON (`text`, the default, or `json`).
fn wants_json(format: Option<&str>) -> Result<bool, Refusal> {
    match format.map(|f| f.trim().to_ascii_lowercase()).as_deref() {
        None | Some("" | "text") => Ok(false),
        Some("json") => Ok(true),
        Some(other) => Err(Refusal::Error(format!(
            "unknown format `{other}`: use text (the default) or json"
        ))),
    }
}

type ToolResult = Result<Answer, Refusal>;

fn finish(result: ToolResult) -> CallToolResult {
    match result {
        Ok(Answer { text, data }) => {
            let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
            r.structured_content = data;
            r
        }
        Err(Refusal::Note(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(Refusal::Error(text)) => CallToolResult::error(vec![ContentBlock::text(text)]),
    }
}

impl MnemoServer {
    pub fn new(options: Options) -> MnemoServer {
        MnemoServer {
            options: Arc::new(options),
            tool_router: Self::tool_router(),
        }
    }

    fn busy(&self) -> Duration {
        Duration::from_millis(self.options.config.store.busy_timeout_ms)
    }

    fn no_database(&self) -> Refusal {
        Refusal::Note(format!(
            "No memory yet: nothing has been captured on this machine (no database at {}). \
             Memory builds up from sessions run with mnemo's hooks installed (`mnemo install`).",
            self.options.data.db_path().display()
        ))
    }

    fn read(&self) -> Result<Store, Refusal> {
        let path = self.options.data.db_path();
        if !path.exists() {
            return Err(self.no_database());
        }
        Store::open_read_only(&path, self.busy())
            .map_err(|e| Refusal::Error(format!("cannot read the memory database: {e}")))
    }

    /// The project a tool call is about: its `project` argument, else the
    /// server's. `Ok(None)` means every project.
    fn project(&self, store: &Store, arg: Option<&str>) -> Result<Option<scope::Project>, Refusal> {
        let arg = arg.map(str::trim).filter(|a| !a.is_empty());
        if arg.is_some_and(|a| a.eq_ignore_ascii_case("all") || a == "*") {
            return Ok(None);
        }
        let resolved = match arg {
            Some(a) => scope::resolve_arg(store.conn(), a, &self.options.project_dir)?,
            None => scope::resolve_dir(store.conn(), &self.options.project_dir)?,
        };
        match resolved {
            Resolved::Found(p) => Ok(Some(p)),
            Resolved::Unknown(identity) => Err(Refusal::Note(format!(
                "Nothing recorded yet for the project {} ({}). Search every project with project: \"all\".",
                identity.name,
                identity.root.display()
            ))),
        }
    }

    fn do_search(&self, p: SearchParams) -> ToolResult {
        let json = wants_json(p.format.as_deref())?;
        let agent = agents::parse_opt(p.agent.as_deref())?;
        let store = self.read()?;
        let project = self.project(&store, p.project.as_deref())?;
        let clock = self.options.clock.refreshed();
        let root = project.as_ref().map(|p| PathBuf::from(&p.root));
        let request = SearchRequest {
            query: p.query,
            project_id: project.as_ref().map(|p| p.id),
            types: p.kind.into_iter().collect(),
            since_ms: p
                .since
                .as_deref()
                .map(|s| clock.parse_since(s))
                .transpose()?,
            until_ms: p
                .until
                .as_deref()
                .map(|s| clock.parse_until(s))
                .transpose()?,
            file: p
                .file
                .as_deref()
                .map(|f| FileFilter::new(f, &self.options.project_dir, root.as_deref())),
            session: None,
            agent,
            mine_only: !self.options.config.sync.others,
            limit: p.limit.unwrap_or(10).clamp(1, 50) as usize,
        };
        let meaning = mnemo_embed::query_meaning(&self.options.config.embeddings, &request.query);
        let results = hybrid::search(store.conn(), &request, meaning)?;
        let text = || {
            let mut text = render::search_results(&results, &clock, Style::AGENT);
            if !results.hits.is_empty() {
                text.push_str(
                    "\nNext: timeline(id) for what surrounds one; get_observations(ids) for full records.",
                );
            }
            text
        };
        Ok(Answer::either(json, text, &results))
    }

    fn do_timeline(&self, p: TimelineParams) -> ToolResult {
        let json = wants_json(p.format.as_deref())?;
        let anchor = p.id.parse()?;
        let agent = agents::parse_opt(p.agent.as_deref())?;
        let store = self.read()?;
        let clock = self.options.clock.refreshed();
        let t = timeline::timeline(
            store.conn(),
            anchor,
            p.before.unwrap_or(5) as usize,
            p.after.unwrap_or(5) as usize,
            agent,
        )?;
        Ok(Answer::either(
            json,
            || render::timeline(&t, &clock, Style::AGENT),
            &t,
        ))
    }

    fn do_get(&self, p: GetObservationsParams) -> ToolResult {
        let json = wants_json(p.format.as_deref())?;
        if p.ids.len() > MAX_IDS {
            return Err(Refusal::Error(format!(
                "{} ids asked for; get_observations takes at most {MAX_IDS} per call: \
                 ask for the few that matter, or split the list",
                p.ids.len()
            )));
        }
        let ids: Vec<ItemRef> = p.ids.iter().map(IdArg::parse).collect::<Result<_, _>>()?;
        if ids.is_empty() {
            return Err(Refusal::Error(
                "give at least one id, e.g. [\"#12\", \"S3\"] (ids come from search or timeline)"
                    .into(),
            ));
        }
        let store = self.read()?;
        let clock = self.options.clock.refreshed();
        let fetched = records::fetch(store.conn(), &ids)?;
        let mut text = render::records(&fetched.records, &clock, Style::AGENT);
        if !fetched.missing.is_empty() {
            let missing: Vec<String> = fetched.missing.iter().map(ToString::to_string).collect();
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("Not found: {}.", missing.join(", ")));
            if fetched.records.is_empty() {
                return Err(Refusal::Error(text));
            }
        }
        Ok(Answer::either(json, || text, &fetched))
    }

    fn do_save(&self, p: SaveMemoryParams) -> ToolResult {
        let dir = match p
            .project
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
        {
            Some(d) => self.options.project_dir.join(d),
            None => self.options.project_dir.clone(),
        };
        let identity = scope::identity_of(&dir);
        let own = scope::identity_of(&self.options.project_dir);
        if identity.root != own.root && !self.options.config.mcp.save_to_other_projects {
            return Err(Refusal::Error(format!(
                "save_memory writes only into the project this session works in ({}); `{}` is \
                 another project ({}). Leave `project` out, or let the user allow it with \
                 `save_to_other_projects = true` under [mcp] in mnemo's config.toml.",
                own.root.display(),
                p.project.as_deref().unwrap_or_default(),
                identity.root.display()
            )));
        }
        let store = Store::open(&self.options.data.db_path(), self.busy())
            .map_err(|e| Refusal::Error(format!("cannot write the memory database: {e}")))?;
        let sanitizer = Sanitizer::new(&self.options.config.privacy);
        let root = identity.root.to_string_lossy();
        let clock = self.options.clock.refreshed();
        let id = save::save_memory(
            store.conn(),
            &save::SaveRequest {
                text: &p.text,
                title: p.title.as_deref(),
                project_root: &root,
                project_name: &identity.name,
                session: self
                    .options
                    .session_id
                    .as_deref()
                    .map(|s| ("claude-code", s)),
                sanitizer: &sanitizer,
                now_ms: clock.now_ms,
            },
        )?;
        Ok(format!(
            "Saved as {id} in {} ({root}); search finds it from now on.",
            identity.name
        )
        .into())
    }

    fn do_correct(&self, p: CorrectParams) -> ToolResult {
        let id = curate::observation_id(&match &p.id {
            IdArg::Number(n) => n.to_string(),
            IdArg::Text(t) => t.clone(),
        })?;
        self.read()?;
        let mut store = Store::open(&self.options.data.db_path(), self.busy())
            .map_err(|e| Refusal::Error(format!("cannot write the memory database: {e}")))?;
        let Some(record) =
            mnemo_store::shape::observation(store.conn(), id).map_err(RecallError::from)?
        else {
            return Err(Refusal::Error(format!(
                "no observation #{id}; search finds ids"
            )));
        };
        let own = scope::identity_of(&self.options.project_dir);
        let own_root = own.root.to_string_lossy();
        if record.project.as_ref().is_some_and(|p| p.root != own_root) {
            return Err(Refusal::Error(format!(
                "#{id} belongs to another project ({}); correct only this project's memory ({own_root})",
                record.project.map(|p| p.root).unwrap_or_default()
            )));
        }
        if p.forget {
            let target =
                mnemo_store::curate::Forget::Items(curate::items(&[ItemRef::observation(id)]));
            let forgotten = store
                .forget_everywhere(&self.options.data, &target, false)
                .map_err(curate::curate_error)?;
            let left = if forgotten.remaining.is_empty() {
                String::new()
            } else {
                format!(" A copy may remain in: {}.", forgotten.remaining.join("; "))
            };
            return Ok(format!(
                "Forgot #{id} ({}); it is gone from search and the index.{left}",
                record.title
            )
            .into());
        }
        let sanitizer = Sanitizer::new(&self.options.config.privacy);
        let clean = |t: &Option<String>| t.as_deref().map(|t| sanitizer.text(t).trim().to_owned());
        let obs_type = match &p.obs_type {
            Some(t) => Some(curate::observation_type(&store, t)?),
            None => None,
        };
        let edit = mnemo_store::curate::Edit {
            title: clean(&p.title),
            subtitle: clean(&p.subtitle),
            narrative: clean(&p.narrative),
            facts: p.facts.as_ref().map(|f| {
                f.iter()
                    .map(|t| sanitizer.text(t).trim().to_owned())
                    .collect()
            }),
            obs_type,
        };
        if edit.is_empty() {
            return Err(Refusal::Error(
                "say what to change (title, subtitle, narrative, facts, type), or forget: true"
                    .into(),
            ));
        }
        store
            .edit_observation(id, &edit)
            .map_err(curate::curate_error)?;
        Ok(format!("Corrected #{id}; search and the index show the new text from now on.").into())
    }

    fn do_context(&self, p: ContextParams) -> ToolResult {
        let agent = agents::parse_opt(p.agent.as_deref())?;
        let store = match self.read() {
            Ok(store) => Some(store),
            Err(Refusal::Note(_)) => None,
            Err(e) => return Err(e),
        };
        let target = scope::target(
            store.as_ref().map(Store::conn),
            p.project.as_deref(),
            &self.options.project_dir,
        )?;
        let request = ContextRequest {
            root: &target.root,
            name: &target.name,
            cwd: target.dir.as_deref(),
            config: &self.options.config.context,
            clock: self.options.clock.refreshed(),
            agent,
            mine_only: !self.options.config.sync.others,
        };
        let index = match &store {
            Some(store) => build(store.conn(), &request)?,
            None => nothing_yet(&request),
        };
        Ok(index.text.into())
    }
}

#[tool_router]
impl MnemoServer {
    /// Step 1 of 3.
    #[tool(
        description = "Step 1 of 3: search the memory of earlier sessions in this project. Returns one \
        cheap line per hit: id (#12 = observation, S3 = turn summary, P7 = user prompt), age, type, \
        title, main file. Any words work (file paths, quotes, punctuation). Then call timeline(id) to \
        see what surrounds a hit, or get_observations(ids) to read the few that matter in full."
    )]
    async fn search(&self, Parameters(p): Parameters<SearchParams>) -> CallToolResult {
        finish(self.do_search(p))
    }

    /// Step 2 of 3.
    #[tool(
        description = "Step 2 of 3: what happened before and after one item (an id from search, e.g. \
        #12, S3 or P7) in its project: observations, turn summaries and prompts in time order, \
        one line each."
    )]
    async fn timeline(&self, Parameters(p): Parameters<TimelineParams>) -> CallToolResult {
        finish(self.do_timeline(p))
    }

    /// Step 3 of 3.
    #[tool(
        description = "Step 3 of 3: full records (narrative, facts, files read and modified, the \
        prompt of that turn) for ids from search or timeline. Ask only for the few you need."
    )]
    async fn get_observations(
        &self,
        Parameters(p): Parameters<GetObservationsParams>,
    ) -> CallToolResult {
        finish(self.do_get(p))
    }

    #[tool(
        description = "Keep something for future sessions of this project: a decision and its \
        reason, a convention, a gotcha, where something lives. Stored as an observation of type \
        memory; search finds it. Private (<private>) text and secrets are removed."
    )]
    async fn save_memory(&self, Parameters(p): Parameters<SaveMemoryParams>) -> CallToolResult {
        finish(self.do_save(p))
    }

    #[tool(
        description = "Correct the memory when you find an observation of this project wrong or \
        outdated (it contradicts the code, or misleads): give its id (#12) and the corrected \
        title, subtitle, narrative, facts or type, which replace the stored ones and are marked \
        as edited; or forget: true to delete it for good when it is not worth fixing. Check the \
        record with get_observations first; do not use it to record new work (save_memory does)."
    )]
    async fn correct(&self, Parameters(p): Parameters<CorrectParams>) -> CallToolResult {
        finish(self.do_correct(p))
    }

    #[tool(
        description = "The memory index of a project as given at session start: recent turn \
        summaries and one line per relevant observation, with ids for get_observations."
    )]
    async fn context(&self, Parameters(p): Parameters<ContextParams>) -> CallToolResult {
        finish(self.do_context(p))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MnemoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
                    .with_title("mnemo memory"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    /// Only the stand-in for an oversized request (see [`frame`]) is known.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method != frame::TOO_LARGE_METHOD {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        let params = request.params.unwrap_or_default();
        Err(ErrorData::invalid_request(
            format!(
                "request too large: {} bytes, mnemo accepts at most {} per message; \
                 send less (fewer ids, a shorter text)",
                params["bytes"], params["limit"]
            ),
            Some(params),
        ))
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin.
pub fn run_stdio(options: Options) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let (requests, bounded) = tokio::io::duplex(64 * 1024);
        tokio::spawn(frame::bound_lines(
            tokio::io::stdin(),
            bounded,
            frame::MAX_REQUEST_BYTES,
        ));
        let service = MnemoServer::new(options)
            .serve((requests, tokio::io::stdout()))
            .await?;
        service.waiting().await?;
        Ok(())
    })
}

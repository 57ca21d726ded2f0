//! The why of a batch: reads its session's transcript (`transcript_path`:
//! Claude Code's transcript, Codex's rollout or Gemini CLI's chat
//! recording) and gives the compressor what the agent said and asked around
//! the batch's tool calls ([`TurnNarrative`]). Tool calls the host's hooks
//! gave no id (Gemini CLI's) get the transcript's, found by order, name and
//! arguments ([`Told::call_ids`]), so the words before a call reach it.
//! A host whose transcript is not read but whose hooks report what the
//! agent thought (Cursor) is told from those notes ([`from_notes`]).
//!
//! A live session's transcript grows with every turn, so the last read is
//! kept while the file is unchanged ([`crate::last_read`]): the batches of a
//! drained backlog read each file once. A transcript that is missing or
//! unreadable makes no narrative (logged once per file), never a failure.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mnemo_compress::{AssistantNote, QuestionAnswer, TurnBatch, TurnNarrative, TurnOrigin};
use mnemo_core::Config;
use mnemo_core::config::glob_match;
use mnemo_core::model::Platform;
use mnemo_core::privacy::Sanitizer;
use mnemo_store::notes::TurnNote;
use mnemo_store::queue::{Lease, QueuedEvent};
use mnemo_transcript::locate::{Captured, Wanted, match_calls, turn_for};
use mnemo_transcript::{Origin, Session, Turn};
use tracing::debug;

use crate::last_read::LastRead;

/// Reads narratives, remembering the last transcript read.
pub struct Narratives {
    sanitizer: Sanitizer,
    /// The tools capture does not record (they are in no batch).
    skip_tools: Vec<String>,
    transcripts: LastRead<Session>,
}

impl Narratives {
    pub fn new(config: &Config) -> Narratives {
        Narratives {
            sanitizer: Sanitizer::new(&config.privacy),
            skip_tools: config.capture.skip_tools.clone(),
            transcripts: LastRead::new(
                "transcript",
                "turns of its session are compressed without it",
            ),
        }
    }

    /// The narrative of the lease's turn, if its transcript tells it.
    /// Blocking (reads a file): call it off the async threads.
    pub fn for_lease(&self, lease: &Lease) -> Option<Told> {
        let path = PathBuf::from(lease.turn.transcript_path.as_deref()?);
        let session = self.session(&path, &lease.turn.platform)?;
        let host_ids: Vec<String> = lease
            .events
            .iter()
            .filter_map(|e| e.tool_use_id.clone())
            .collect();
        let wanted = Wanted {
            tool_use_ids: &host_ids,
            prompt: lease.turn.prompt.as_deref(),
            prompt_number: lease.turn.prompt_number,
        };
        let Some(turn) = turn_for(&session, &wanted) else {
            debug!(
                "turn {} of session {}: not found in {}",
                lease.turn.prompt_number,
                lease.turn.platform_session_id,
                path.display()
            );
            return None;
        };
        let call_ids = unnamed_calls(turn, &lease.events);
        let ids: Vec<String> = lease
            .events
            .iter()
            .filter_map(|e| {
                e.tool_use_id
                    .clone()
                    .or_else(|| call_ids.get(&e.id).cloned())
            })
            .collect();
        Some(Told {
            narrative: narrative(turn, &ids, lease.turn_complete, &self.skip_tools),
            call_ids,
        })
    }

    /// The session a host's transcript tells: Codex's rollout, Gemini CLI's
    /// chat recording, else a Claude Code-style transcript.
    fn session(&self, path: &Path, platform: &str) -> Option<Arc<Session>> {
        let sanitizer = &self.sanitizer;
        match Platform::parse(platform) {
            Some(Platform::Codex) => self
                .transcripts
                .get(path, |p| mnemo_transcript::read_rollout(p, sanitizer)),
            Some(Platform::Gemini) => self
                .transcripts
                .get(path, |p| mnemo_transcript::read_gemini(p, sanitizer)),
            _ => self
                .transcripts
                .get(path, |p| mnemo_transcript::read_session(p, sanitizer)),
        }
    }
}

/// What a lease's turn is in the host's transcript.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Told {
    pub narrative: TurnNarrative,
    /// The transcript's ids of the lease's tool calls the host gave none,
    /// by event row id.
    pub call_ids: HashMap<i64, String>,
}

impl Told {
    /// Gives `batch` the narrative, and its events without a host id the
    /// transcript's.
    pub fn apply(self, batch: &mut TurnBatch) {
        for e in batch.events.iter_mut().filter(|e| e.tool_use_id.is_none()) {
            e.tool_use_id = self.call_ids.get(&e.id).cloned();
        }
        batch.narrative = Some(self.narrative);
    }
}

/// A turn told by its hooks' notes: each note goes before the first tool
/// call captured after it (a call without a host id gets one for the
/// batch, `event-<row id>`); notes after the last call are the turn's. None
/// without notes.
pub fn from_notes(notes: &[TurnNote], events: &[QueuedEvent]) -> Option<Told> {
    if notes.is_empty() {
        return None;
    }
    let calls: Vec<&QueuedEvent> = events.iter().filter(|e| !e.is_turn_end()).collect();
    let mut call_ids = HashMap::new();
    let notes = notes
        .iter()
        .map(|note| {
            let next = calls.iter().find(|e| e.created_at >= note.created_at);
            let before_tool_use_id = next.map(|e| match &e.tool_use_id {
                Some(id) => id.clone(),
                None => call_ids
                    .entry(e.id)
                    .or_insert_with(|| format!("event-{}", e.id))
                    .clone(),
            });
            AssistantNote {
                text: note.text.clone(),
                before_tool_use_id,
            }
        })
        .collect();
    Some(Told {
        narrative: TurnNarrative {
            notes,
            ..TurnNarrative::default()
        },
        call_ids,
    })
}

/// The transcript ids of the captured tool calls that have no host id,
/// paired with `turn`'s calls by order, name and arguments.
fn unnamed_calls(turn: &Turn, events: &[QueuedEvent]) -> HashMap<i64, String> {
    let unnamed: Vec<(&QueuedEvent, &str, serde_json::Value)> = events
        .iter()
        .filter(|e| e.tool_use_id.is_none() && !e.is_turn_end())
        .filter_map(|e| {
            let input = e
                .input
                .as_deref()
                .and_then(|i| serde_json::from_str(i).ok());
            Some((e, e.tool_name.as_deref()?, input.unwrap_or_default()))
        })
        .collect();
    if unnamed.is_empty() {
        return HashMap::new();
    }
    let captured: Vec<Captured<'_>> = unnamed
        .iter()
        .map(|(e, name, input)| Captured {
            name,
            input,
            at_ms: Some(e.created_at),
        })
        .collect();
    unnamed
        .iter()
        .zip(match_calls(turn, &captured))
        .filter_map(|((e, _, _), call)| Some((e.id, call?)))
        .collect()
}

/// The part of `turn` that concerns a batch holding the calls `ids`: the
/// words and questions from just after the previous batch's last call to
/// this batch's last call (tools that capture skips, such as
/// AskUserQuestion, are in no batch: what precedes them goes with the batch
/// of the next captured call), the question its prompt answered for the
/// turn's first piece, and the final report when the batch ends the turn.
pub fn narrative(
    turn: &Turn,
    ids: &[String],
    turn_complete: bool,
    skip: &[String],
) -> TurnNarrative {
    let span = span(turn, ids, turn_complete, skip);
    let at = |id: &Option<String>| match id {
        Some(id) => turn.tool_calls.iter().position(|c| &c.id == id),
        None => Some(usize::MAX),
    };
    let within =
        |id: &Option<String>| at(id).is_some_and(|i| span.as_ref().is_some_and(|s| s.contains(&i)));
    TurnNarrative {
        origin: match turn.origin {
            Origin::User => TurnOrigin::User,
            Origin::TaskNotification => TurnOrigin::TaskNotification,
            Origin::Compaction => TurnOrigin::Compaction,
        },
        continues_request: turn.continues_request.clone(),
        notes: turn
            .notes
            .iter()
            .filter(|n| within(&n.before_tool_use_id))
            .map(|n| AssistantNote {
                text: n.text.clone(),
                before_tool_use_id: n.before_tool_use_id.clone(),
            })
            .collect(),
        questions: turn
            .questions
            .iter()
            .filter(|q| match &q.tool_use_id {
                Some(_) => within(&q.tool_use_id),
                None => span.as_ref().is_some_and(|s| opens_turn(turn, *s.start())),
            })
            .map(|q| QuestionAnswer {
                question: q.question.clone(),
                options: q.options.clone(),
                option_notes: q.option_notes.clone(),
                answer: q.answer.clone(),
            })
            .collect(),
        final_report: turn.final_report.clone().filter(|_| turn_complete),
    }
}

/// True when a batch whose calls start at `start` is the turn's first
/// piece: every call before it failed or was refused (a refused call is in
/// no batch, so the question the prompt answered would go to none).
fn opens_turn(turn: &Turn, start: usize) -> bool {
    turn.tool_calls
        .iter()
        .take(start)
        .all(|c| c.error.is_some())
}

/// The tool-call positions of `turn` a batch speaks for (`usize::MAX`
/// stands for "after the last call"); None when it speaks for none.
fn span(
    turn: &Turn,
    ids: &[String],
    turn_complete: bool,
    skip: &[String],
) -> Option<std::ops::RangeInclusive<usize>> {
    let calls = &turn.tool_calls;
    let captured = |i: &usize| !skip.iter().any(|p| glob_match(p, &calls[*i].name));
    let found: Vec<usize> = ids
        .iter()
        .filter_map(|id| calls.iter().position(|c| &c.id == id))
        .collect();
    let (lo, hi) = match (found.iter().min(), found.iter().max()) {
        (Some(&lo), Some(&hi)) => (lo, hi),
        // No call of this turn in the batch: only its end, if it has it.
        _ if turn_complete => (calls.len(), calls.len()),
        _ => return None,
    };
    let start = (0..lo).rev().find(captured).map_or(0, |i| i + 1);
    let end = if turn_complete { usize::MAX } else { hi };
    Some(start..=end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemo_store::queue::{QueuedEvent, TurnInfo};
    use serde_json::json;

    fn event(id: i64, tool_use_id: &str) -> QueuedEvent {
        QueuedEvent {
            id,
            uid: format!("e{id}"),
            kind: "tool_use".into(),
            tool_name: Some("Bash".into()),
            input: None,
            response: None,
            error: None,
            files_read: vec![],
            files_modified: vec![],
            note: None,
            priority: 1,
            attempts: 0,
            created_at: 0,
            tool_use_id: Some(tool_use_id.into()),
        }
    }

    fn lease(path: Option<&Path>, events: Vec<QueuedEvent>, complete: bool) -> Lease {
        Lease {
            turn: TurnInfo {
                session_id: 1,
                platform_session_id: "s-1".into(),
                prompt_number: 1,
                prompt: Some("use the cache".into()),
                transcript_path: path.map(|p| p.display().to_string()),
                ..TurnInfo::default()
            },
            events,
            turn_ends: vec![],
            turn_complete: complete,
            lease_until: 0,
        }
    }

    fn transcript(dir: &Path) -> PathBuf {
        let lines = [
            json!({"type": "user", "sessionId": "s-1", "message": {"content": "use the cache"}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "thinking", "thinking": "secret musing"},
                {"type": "text", "text": "The old client retries forever; switch to the bounded one."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}]}}),
            json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "text", "text": "Then the tests."},
                {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "make test"}}]}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "text", "text": "Done: bounded retries."}]}}),
        ];
        let path = dir.join("s-1.jsonl");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_batch_gets_the_words_before_its_own_calls_and_the_report_at_the_end() {
        let tmp = tempfile::tempdir().unwrap();
        let path = transcript(tmp.path());
        let narratives = Narratives::new(&Config::default());
        let first = narratives
            .for_lease(&lease(Some(&path), vec![event(1, "t1")], false))
            .expect("found by tool id")
            .narrative;
        assert_eq!(first.notes.len(), 1);
        assert!(first.notes[0].text.contains("bounded one"));
        assert_eq!(first.final_report, None);
        let last = narratives
            .for_lease(&lease(Some(&path), vec![event(2, "t2")], true))
            .expect("found by tool id")
            .narrative;
        assert_eq!(last.notes[0].text, "Then the tests.");
        assert_eq!(last.final_report.as_deref(), Some("Done: bounded retries."));
        let rendered = format!("{first:?}{last:?}");
        assert!(!rendered.contains("musing"));
    }

    #[test]
    fn words_before_a_skipped_tool_go_with_the_next_captured_call() {
        let tmp = tempfile::tempdir().unwrap();
        let lines = [
            json!({"type": "user", "message": {"content": "add a cache"}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "text", "text": "Asking which store fits."},
                {"type": "tool_use", "id": "q1", "name": "AskUserQuestion", "input": {"questions": [
                    {"question": "Which store?", "options": [{"label": "LRU"}, {"label": "Redis"}]}]}}]}}),
            json!({"type": "user", "toolUseResult": {"answers": {"Which store?": "LRU"}},
                   "message": {"content": [{"type": "tool_result", "tool_use_id": "q1", "content": "ok"}]}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "text", "text": "LRU it is: one instance."},
                {"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": "/p/c.rs"}}]}}),
        ];
        let path = tmp.path().join("s.jsonl");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let mut l = lease(Some(&path), vec![event(1, "w1")], true);
        l.turn.prompt = Some("add a cache".into());
        let n = Narratives::new(&Config::default())
            .for_lease(&l)
            .unwrap()
            .narrative;
        let notes: Vec<&str> = n.notes.iter().map(|n| n.text.as_str()).collect();
        assert_eq!(
            notes,
            ["Asking which store fits.", "LRU it is: one instance."]
        );
        assert_eq!(n.questions.len(), 1);
        assert_eq!(n.questions[0].answer, "LRU");
        assert_eq!(n.questions[0].options, ["LRU", "Redis"]);
    }

    #[test]
    fn the_answered_question_goes_to_the_first_batch_after_a_refused_call() {
        let tmp = tempfile::tempdir().unwrap();
        let lines = [
            json!({"type": "user", "message": {"content": "check the loop"}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "text", "text": "The inner check is redundant. Want me to remove it?"}]}}),
            json!({"type": "user", "message": {"content": "yes, once is enough"}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "id": "e1", "name": "Edit", "input": {"file_path": "/p/a.sh"}}]}}),
            json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "e1", "is_error": true,
                 "content": "The user doesn't want to proceed with this tool use."}]}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "id": "e2", "name": "Edit", "input": {"file_path": "/p/a.sh"}}]}}),
            json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "e2", "content": "ok"}]}}),
        ];
        let path = tmp.path().join("s.jsonl");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let mut l = lease(Some(&path), vec![event(1, "e2")], true);
        l.turn.prompt = Some("yes, once is enough".into());
        l.turn.prompt_number = 2;
        let n = Narratives::new(&Config::default())
            .for_lease(&l)
            .unwrap()
            .narrative;
        assert_eq!(n.questions.len(), 1, "{n:?}");
        assert_eq!(n.questions[0].answer, "yes, once is enough");
    }

    #[test]
    fn gemini_calls_without_ids_get_the_recordings_and_their_words() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../mnemo-transcript/tests/fixtures/gemini/session.token_bucket.jsonl");
        let file = "/home/dev/projects/limiter/limits.py";
        let unnamed = |id: i64, tool: &str, input: serde_json::Value| QueuedEvent {
            tool_use_id: None,
            tool_name: Some(tool.into()),
            input: Some(input.to_string()),
            ..event(id, "")
        };
        let events = vec![
            unnamed(1, "Read", json!({"file_path": file})),
            unnamed(2, "Write", json!({"file_path": file, "content": "x"})),
            unnamed(3, "Bash", json!({"command": "python3 limits.py"})),
        ];
        let mut l = lease(Some(&path), events, true);
        l.turn.platform = Platform::Gemini.as_str().into();
        l.turn.prompt = Some("make the rate limiter smooth out bursts".into());
        let told = Narratives::new(&Config::default())
            .for_lease(&l)
            .expect("the recording tells the turn");
        assert_eq!(told.call_ids.len(), 3, "{:?}", told.call_ids);
        let write_id = told.call_ids[&2].clone();
        let reason = told
            .narrative
            .notes
            .iter()
            .find(|n| n.before_tool_use_id.as_deref() == Some(write_id.as_str()))
            .expect("the words before the write");
        assert!(reason.text.contains("window edge"), "{}", reason.text);
        let mut batch = crate::drain::build_batch(&l);
        told.apply(&mut batch);
        assert_eq!(
            batch.events[1].tool_use_id.as_deref(),
            Some(write_id.as_str())
        );
        assert!(batch.narrative.unwrap().final_report.is_some());
    }

    #[test]
    fn hook_notes_go_before_the_next_captured_call() {
        let mut first = event(1, "tu1");
        first.created_at = 20;
        let mut second = event(2, "");
        second.tool_use_id = None;
        second.created_at = 40;
        let note = |text: &str, at: i64| TurnNote {
            text: text.into(),
            thought: true,
            created_at: at,
        };
        assert_eq!(from_notes(&[], &[first.clone()]), None);
        let told = from_notes(
            &[note("a", 10), note("b", 30), note("c", 50)],
            &[first, second],
        )
        .unwrap();
        let placed: Vec<(&str, Option<&str>)> = told
            .narrative
            .notes
            .iter()
            .map(|n| (n.text.as_str(), n.before_tool_use_id.as_deref()))
            .collect();
        assert_eq!(
            placed,
            [("a", Some("tu1")), ("b", Some("event-2")), ("c", None)]
        );
        assert_eq!(told.call_ids[&2], "event-2");
    }

    #[test]
    fn no_transcript_means_no_narrative() {
        let tmp = tempfile::tempdir().unwrap();
        let narratives = Narratives::new(&Config::default());
        let gone = tmp.path().join("gone.jsonl");
        assert!(
            narratives
                .for_lease(&lease(Some(&gone), vec![], true))
                .is_none()
        );
        assert!(narratives.for_lease(&lease(None, vec![], true)).is_none());
        std::fs::write(&gone, "garbage\n").unwrap();
        assert!(
            narratives
                .for_lease(&lease(Some(&gone), vec![], true))
                .is_none()
        );
    }
}

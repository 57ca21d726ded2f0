//! Task-tracker commands told by their form, whatever the tracker is called:
//! `<program> [issue|ticket|task…] <verb> <ids…> [--reason "…"]`, as in
//! `gh issue close 12`, `jira issue move PROJ-7 Done` or `tix done AB-3`.
//! A command is a tracker's when a lifecycle verb (close, update, create…)
//! comes with something only trackers have: a tracker noun before the verb,
//! a tracker flag (`--status`, `--priority`…), or arguments shaped like
//! ticket ids. No tracker is known by name.

/// Nouns a tracker puts before its verb (`gh issue close`).
const NOUNS: &[&str] = &[
    "issue",
    "issues",
    "ticket",
    "tickets",
    "task",
    "tasks",
    "bug",
    "bugs",
    "story",
    "stories",
    "epic",
    "epics",
    "item",
    "items",
    "card",
    "cards",
    "todo",
    "todos",
    "workitem",
    "work-item",
];

/// Verbs that close their ids.
const CLOSE_VERBS: &[&str] = &["close", "done", "resolve", "finish", "complete"];

/// Verbs that act on the ids after them (a loosely shaped id is enough).
const ID_VERBS: &[&str] = &[
    "update",
    "edit",
    "set",
    "move",
    "transition",
    "reopen",
    "show",
    "view",
    "claim",
    "assign",
    "comment",
];

/// Verbs that create an item.
const CREATE_VERBS: &[&str] = &["create", "new", "add", "open", "file"];

/// Verbs that need a tracker noun or flag besides (`start`, `list` say
/// nothing of a tracker on their own).
const OTHER_VERBS: &[&str] = &["start", "list", "ready", "search", "label", "link", "sync"];

/// Flags only a tracker takes.
const FLAGS: &[&str] = &[
    "--status",
    "--state",
    "--priority",
    "--assignee",
    "--type",
    "--label",
    "--labels",
    "--reason",
    "--resolution",
    "--parent",
    "--epic",
    "--title",
    "--summary",
];

/// Flags whose value sets the item's state (`--status done`).
const STATE_FLAGS: &[&str] = &["--status", "--state", "-s"];

/// States that close an item.
const CLOSED_STATES: &[&str] = &[
    "done",
    "closed",
    "close",
    "resolved",
    "complete",
    "completed",
    "finished",
    "fixed",
];

/// Flags whose value is why the item was closed or changed.
const REASON_FLAGS: &[&str] = &[
    "--reason",
    "-r",
    "--comment",
    "-c",
    "-m",
    "--message",
    "--resolution",
];

/// Flags whose value is a new item's title.
const TITLE_FLAGS: &[&str] = &["--title", "-t", "--summary"];

/// What one tracker command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrackerCommand {
    /// It closes `ids`.
    pub closes: bool,
    /// It creates an item.
    pub creates: bool,
    /// The ids it acts on, as written (a bare number as `#12`).
    pub ids: Vec<String>,
    /// The reason or comment it gave.
    pub reason: Option<String>,
    /// A new item's title.
    pub title: Option<String>,
}

/// The tracker command `words` (one simple command, quotes removed) is;
/// None when it is no tracker's.
pub(crate) fn read(words: &[String]) -> Option<TrackerCommand> {
    let (nouns, verb_at) = nouns_before_verb(words)?;
    let verb = words[verb_at].to_ascii_lowercase();
    let rest = &words[verb_at + 1..];
    let ids = ids_after(rest, nouns > 0);
    let flagged = rest.iter().any(|w| FLAGS.contains(&flag_name(w)));
    let strict = ids.iter().any(|id| is_strict_id(id));
    let by_id = !ids.is_empty()
        && (CLOSE_VERBS.contains(&verb.as_str()) || ID_VERBS.contains(&verb.as_str()));
    if !(nouns > 0 || flagged || strict || by_id) {
        return None;
    }
    let closes = CLOSE_VERBS.contains(&verb.as_str()) || sets_closed_state(rest, &ids);
    Some(TrackerCommand {
        closes: closes && !ids.is_empty(),
        creates: CREATE_VERBS.contains(&verb.as_str()),
        ids: ids.iter().map(|id| shown_id(id)).collect(),
        reason: flag_value(rest, REASON_FLAGS),
        title: flag_value(rest, TITLE_FLAGS).or_else(|| {
            CREATE_VERBS
                .contains(&verb.as_str())
                .then(|| first_text(rest))?
        }),
    })
}

/// How many tracker nouns come before the verb (at most two), and where
/// the verb is; None when the second or third word is no tracker verb.
fn nouns_before_verb(words: &[String]) -> Option<(usize, usize)> {
    let is_verb = |w: &str| {
        let w = w.to_ascii_lowercase();
        [CLOSE_VERBS, ID_VERBS, CREATE_VERBS, OTHER_VERBS]
            .iter()
            .any(|set| set.contains(&w.as_str()))
    };
    let mut at = 1;
    while words
        .get(at)
        .is_some_and(|w| NOUNS.contains(&w.to_ascii_lowercase().as_str()))
        && at < 3
    {
        at += 1;
    }
    words.get(at).filter(|w| is_verb(w)).map(|_| (at - 1, at))
}

/// The id-shaped operands right after the verb (flags and their values
/// skipped); bare numbers count only after a tracker noun (`gh issue close
/// 12`) or with a `#`.
fn ids_after(rest: &[String], noun: bool) -> Vec<String> {
    let mut ids = Vec::new();
    let mut words = rest.iter();
    while let Some(w) = words.next() {
        if w.starts_with('-') {
            if !w.contains('=') && takes_value(w) {
                words.next();
            }
            continue;
        }
        let number = w.chars().all(|c| c.is_ascii_digit());
        if (number && noun && w.len() <= 7) || is_id(w) {
            ids.push(w.clone());
        } else {
            break;
        }
    }
    ids
}

/// A flag followed by its value (`--reason "…"`), not a switch (`--force`).
fn takes_value(flag: &str) -> bool {
    [FLAGS, REASON_FLAGS, TITLE_FLAGS, STATE_FLAGS]
        .iter()
        .any(|set| set.contains(&flag))
        || flag.starts_with("--") && !matches!(flag, "--force" | "--yes" | "--json" | "--all")
}

/// The name of a flag word (`--status=done` gives `--status`).
fn flag_name(word: &str) -> &str {
    word.split('=').next().unwrap_or(word)
}

/// A ticket id: strict (`ABC-123`, `#12`, `owner/repo#12`) or loose (a
/// lower-case prefix, a dash and a short code: `x-12`, `app-gqc.1`).
fn is_id(word: &str) -> bool {
    is_strict_id(word) || is_loose_id(word)
}

/// `ABC-123`, `#12`, `owner/repo#12`.
fn is_strict_id(word: &str) -> bool {
    let digits = |s: &str| (1..=7).contains(&s.len()) && s.chars().all(|c| c.is_ascii_digit());
    if let Some((repo, number)) = word.rsplit_once('#') {
        return digits(number) && (repo.is_empty() || repo.split('/').count() == 2);
    }
    word.split_once('-').is_some_and(|(prefix, number)| {
        digits(number)
            && (1..=10).contains(&prefix.len())
            && prefix
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_uppercase())
            && prefix
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
    })
}

/// `x-12`, `app-gqc`, `app-gqc.1`: a prefix of letters, then one or two
/// dash-separated short codes, then optional `.N` parts.
fn is_loose_id(word: &str) -> bool {
    let (head, subs) = word.split_once('.').unwrap_or((word, ""));
    let subs_ok = subs.is_empty()
        || subs
            .split('.')
            .all(|s| !s.is_empty() && s.len() <= 4 && s.chars().all(|c| c.is_ascii_digit()));
    let mut parts = head.split('-');
    let prefix = parts.next().unwrap_or("");
    let codes: Vec<&str> = parts.collect();
    let code_ok = |c: &&str| {
        (1..=8).contains(&c.len())
            && c.chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit())
    };
    subs_ok
        && (1..=12).contains(&prefix.len())
        && prefix.chars().all(|c| c.is_ascii_lowercase())
        && (1..=2).contains(&codes.len())
        && codes.iter().all(code_ok)
}

/// True when the command sets the item to a closed state: a state flag's
/// value (`--status done`) or the word after the ids (`move PROJ-1 Done`).
fn sets_closed_state(rest: &[String], ids: &[String]) -> bool {
    let closed = |w: &str| CLOSED_STATES.contains(&w.to_ascii_lowercase().as_str());
    flag_value(rest, STATE_FLAGS).is_some_and(|v| closed(&v))
        || (!ids.is_empty() && rest.get(ids.len()).is_some_and(|w| closed(w)))
}

/// The value of the first of `flags` (`--reason "x"` or `--reason=x`).
fn flag_value(rest: &[String], flags: &[&str]) -> Option<String> {
    for flag in flags {
        for (i, w) in rest.iter().enumerate() {
            let value = match w.split_once('=') {
                Some((name, v)) if name == *flag => Some(v.to_owned()),
                None if w == flag => rest.get(i + 1).cloned(),
                _ => None,
            };
            if let Some(v) = value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) {
                return Some(crate::text::one_line(&v, 300));
            }
        }
    }
    None
}

/// A new item's title given as its first operand (`tix new "Fix login"`).
fn first_text(rest: &[String]) -> Option<String> {
    rest.first()
        .filter(|w| !w.starts_with('-') && w.contains(' '))
        .map(|w| crate::text::one_line(w, 200))
}

/// A bare number shown as `#12`.
fn shown_id(id: &str) -> String {
    if id.chars().all(|c| c.is_ascii_digit()) {
        format!("#{id}")
    } else {
        id.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(line: &str) -> Option<TrackerCommand> {
        mnemo_core::shell::parse(line)
            .parts
            .iter()
            .find_map(|w| read(w))
    }

    fn closed(line: &str) -> Option<(Vec<String>, Option<String>)> {
        cmd(line).filter(|t| t.closes).map(|t| (t.ids, t.reason))
    }

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn closing_commands_of_several_trackers() {
        assert_eq!(closed("gh issue close 12"), Some((ids(&["#12"]), None)));
        assert_eq!(
            closed("bd close x-12 --reason \"Fixed in the parser\""),
            Some((ids(&["x-12"]), Some("Fixed in the parser".into())))
        );
        assert_eq!(closed("tix done AB-3"), Some((ids(&["AB-3"]), None)));
        assert_eq!(
            closed("jira issue move PROJ-7 Done"),
            Some((ids(&["PROJ-7"]), None))
        );
        assert_eq!(
            closed("linear issue update ENG-42 --state completed -m 'shipped in v2'"),
            Some((ids(&["ENG-42"]), Some("shipped in v2".into())))
        );
        assert_eq!(
            closed("gh issue close 12 --comment \"Duplicate of #9\""),
            Some((ids(&["#12"]), Some("Duplicate of #9".into())))
        );
        assert_eq!(
            closed("acme resolve web-3.2 web-4 --reason=merged"),
            Some((ids(&["web-3.2", "web-4"]), Some("merged".into())))
        );
    }

    #[test]
    fn updates_and_creations_are_tracker_commands_that_close_nothing() {
        let update = cmd("tk update app-x9 --status in_progress").unwrap();
        assert!(!update.closes);
        assert_eq!(update.ids, ids(&["app-x9"]));
        let created = cmd("gh issue create --title \"Login fails on Safari\"").unwrap();
        assert!(created.creates && !created.closes);
        assert_eq!(created.title.as_deref(), Some("Login fails on Safari"));
        let created = cmd("trk create \"Retry the upload\" -p 1 --type task").unwrap();
        assert_eq!(created.title.as_deref(), Some("Retry the upload"));
        assert!(cmd("gh issue list --state open").is_some());
    }

    #[test]
    fn other_commands_with_tracker_verbs_are_not_trackers() {
        for line in [
            "cargo new demo",
            "docker start web",
            "npm view react",
            "make done",
            "mix test",
            "git add src/main.rs",
            "systemctl restart nginx-1",
            "ls done",
            "node scripts/close.js",
        ] {
            assert_eq!(cmd(line), None, "{line}");
        }
    }

    #[test]
    fn id_shapes() {
        for id in [
            "ABC-123",
            "#12",
            "acme/web#3",
            "x-12",
            "app-gqc.1",
            "bd-a1b2",
        ] {
            assert!(is_id(id), "{id}");
        }
        for not in [
            "src/main.rs",
            "lodash",
            "Done",
            "v1.2",
            "README.md",
            "a-b-c-d",
        ] {
            assert!(!is_id(not), "{not}");
        }
    }
}

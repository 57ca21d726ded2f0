//! Planning mnemo's entries under `hooks` in a Claude-style hooks file: Claude Code's
//! `settings.json`, Codex's `hooks.json` and Gemini CLI's `settings.json` share the nesting
//! `{"hooks": {"<Event>": [{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}]}}`.
//!
//! Which entries are ours depends on the host: `mnemo hook <host> ...` (see [`crate::command`]).
//! Each of our handlers lives in a matcher group of its own, appended after whatever the user and
//! other tools registered, so that uninstall can take the whole group out again and leave the file
//! as it was. Entries are recognised by their command line ([`is_mnemo_hook_command`]), never by
//! position, because users move things around and older versions installed from other paths.

use std::collections::HashSet;

use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstObjectProp};

use crate::command::is_mnemo_hook_command_for;
use crate::edit::{Change, ChangeKind, ParseError, SettingsEdit};
use crate::host::HookPlanners;
use crate::jsonc::{
    Document, describe, removal_drops_comments_outside, string_property, string_value,
};

/// One hook mnemo wants installed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HookSpec {
    /// The hook event, e.g. `PostToolUse`.
    pub event: String,
    /// `Some("*")` for tool events; `None` for events without matchers (`UserPromptSubmit`).
    pub matcher: Option<String>,
    /// The full shell command line, e.g. `'/opt/my dir/mnemo' hook claude-code PostToolUse`.
    pub command: String,
    /// In the host's unit (seconds for Claude Code and Codex, milliseconds for Gemini CLI; see
    /// `mnemo_core::host::HookTimeout`).
    pub timeout_secs: u32,
}

/// The planners of a Claude-style hooks file, for any host that has one.
pub const PLANNERS: HookPlanners = HookPlanners {
    install: |platform, text, _program, specs| plan_install_for(platform.as_str(), text, specs),
    uninstall: |platform, text| plan_uninstall_for(platform.as_str(), text),
    find: |platform, text| find_mnemo_hooks_for(platform.as_str(), text),
};

/// [`plan_install_for`] Claude Code.
pub fn plan_install(existing: &str, hooks: &[HookSpec]) -> Result<SettingsEdit, ParseError> {
    plan_install_for("claude-code", existing, hooks)
}

/// [`plan_uninstall_for`] Claude Code.
pub fn plan_uninstall(existing: &str) -> Result<SettingsEdit, ParseError> {
    plan_uninstall_for("claude-code", existing)
}

/// [`find_mnemo_hooks_for`] Claude Code.
pub fn find_mnemo_hooks(existing: &str) -> Result<Vec<(String, String)>, ParseError> {
    find_mnemo_hooks_for("claude-code", existing)
}

/// Merge `hooks` (commands `mnemo hook <host> ...`) into the settings text `existing` ("" for a
/// missing file).
///
/// Each spec ends up as exactly one handler of ours for its event: added when missing, updated in
/// place when an older entry of ours differs (binary path, timeout, matcher), left alone when it
/// already matches. Further entries of ours for the same event, and entries for events no spec
/// names any more, are removed. Nothing that is not ours is modified.
pub fn plan_install_for(
    host: &str,
    existing: &str,
    hooks: &[HookSpec],
) -> Result<SettingsEdit, ParseError> {
    let doc = Document::parse(existing)?;
    let section = match doc.existing_root_object()? {
        Some(root) => HooksSection::read(&doc, &root, host)?,
        None => None,
    };
    let ours = section
        .as_ref()
        .map(HooksSection::our_handlers)
        .unwrap_or_default();

    let plan = pair_specs_with_handlers(hooks, &ours);
    let mut changes = Vec::new();
    for (spec, pairing) in hooks.iter().zip(&plan.pairings) {
        let kind = match pairing {
            Pairing::Matches => ChangeKind::Unchanged,
            Pairing::Differs(_) => ChangeKind::Updated,
            Pairing::Missing => ChangeKind::Added,
        };
        changes.push(Change::new(kind, &spec.event, &spec.command));
    }
    for &index in &plan.leftovers {
        changes.push(Change::new(
            ChangeKind::Removed,
            &ours[index].event,
            &ours[index].command,
        ));
    }
    if changes.iter().all(|c| c.kind == ChangeKind::Unchanged) {
        return Ok(SettingsEdit::unchanged(existing, changes));
    }

    // Updates first, while every node still sits where it was found; then additions; removals go
    // last so that an emptied `hooks` object is only dropped when nothing was added to it.
    let mut additions = Vec::new();
    let mut removals: Vec<&OurHandler> = plan.leftovers.iter().map(|&i| &ours[i]).collect();
    for (spec, pairing) in hooks.iter().zip(&plan.pairings) {
        match *pairing {
            Pairing::Matches => {}
            Pairing::Differs(index) => {
                if !update_in_place(&ours[index], spec, host) {
                    removals.push(&ours[index]);
                    additions.push(spec);
                }
            }
            Pairing::Missing => additions.push(spec),
        }
    }
    add_groups(&doc, section.as_ref(), &additions);
    if let Some(section) = &section {
        for handler in removals {
            section.remove(handler);
        }
    }
    Ok(SettingsEdit {
        new_text: doc.render(),
        changes,
    })
}

/// Remove every hook handler of ours (for `host`) from the settings text `existing`, and with it each matcher
/// group, event array and finally `hooks` object that holds nothing else.
pub fn plan_uninstall_for(host: &str, existing: &str) -> Result<SettingsEdit, ParseError> {
    let doc = Document::parse(existing)?;
    let section = match doc.existing_root_object()? {
        Some(root) => HooksSection::read(&doc, &root, host)?,
        None => None,
    };
    let Some(section) = section else {
        return Ok(SettingsEdit::unchanged(existing, Vec::new()));
    };
    let ours = section.our_handlers();
    if ours.is_empty() {
        return Ok(SettingsEdit::unchanged(existing, Vec::new()));
    }
    let mut changes = Vec::new();
    for handler in &ours {
        section.remove(handler);
        changes.push(Change::new(
            ChangeKind::Removed,
            &handler.event,
            &handler.command,
        ));
    }
    Ok(SettingsEdit {
        new_text: doc.render(),
        changes,
    })
}

/// The hook handlers of ours in the settings text `existing`, as `(event, command)` in document
/// order: what `mnemo doctor` checks an installation against, without planning any edit.
pub fn find_mnemo_hooks_for(
    host: &str,
    existing: &str,
) -> Result<Vec<(String, String)>, ParseError> {
    let doc = Document::parse(existing)?;
    let section = match doc.existing_root_object()? {
        Some(root) => HooksSection::read(&doc, &root, host)?,
        None => None,
    };
    Ok(section
        .map(|section| section.our_handlers())
        .unwrap_or_default()
        .into_iter()
        .map(|handler| (handler.event, handler.command))
        .collect())
}

/// The `hooks` object of the settings, checked to be the shape Claude Code accepts.
struct HooksSection {
    /// The host whose entries are ours (`claude-code`).
    host: String,
    /// `"hooks": {...}` in the top-level object.
    prop: CstObjectProp,
    object: CstObject,
    events: Vec<EventGroups>,
}

/// `"PostToolUse": [ ...matcher groups... ]`
struct EventGroups {
    name: String,
    prop: CstObjectProp,
    groups: CstArray,
}

/// A handler of ours along with the containers it sits in, which removing it may empty.
struct OurHandler {
    event: String,
    /// Index into [`HooksSection::events`].
    event_index: usize,
    group: CstObject,
    /// The group's `hooks` array, holding `handler`.
    handlers: CstArray,
    handler: CstObject,
    command: String,
}

impl HooksSection {
    /// Reads `hooks` from the top-level object. Only what mnemo has to walk is checked: `hooks`
    /// must be an object of arrays; inside the arrays anything unexpected is skipped, not refused.
    fn read(doc: &Document, root: &CstObject, host: &str) -> Result<Option<Self>, ParseError> {
        let Some((prop, object)) = doc.object_property(root, "hooks")? else {
            return Ok(None);
        };
        let mut events = Vec::new();
        let mut seen = HashSet::new();
        for event_prop in object.properties() {
            let (Some(name), Some(value)) = (event_prop.decoded_name(), event_prop.value()) else {
                continue;
            };
            if !seen.insert(name.clone()) {
                let message = format!("`hooks.{name}` appears more than once; keep one of them");
                return Err(doc.shape_error(&event_prop.into(), message));
            }
            let Some(groups) = value.as_array() else {
                let message = format!(
                    "`hooks.{name}` must be an array of matcher groups, but it is {}",
                    describe(&value)
                );
                return Err(doc.shape_error(&value, message));
            };
            events.push(EventGroups {
                name,
                prop: event_prop,
                groups,
            });
        }
        Ok(Some(HooksSection {
            host: host.to_owned(),
            prop,
            object,
            events,
        }))
    }

    /// Every handler of ours, in document order.
    fn our_handlers(&self) -> Vec<OurHandler> {
        let mut ours = Vec::new();
        for (event_index, event) in self.events.iter().enumerate() {
            for group in event
                .groups
                .elements()
                .iter()
                .filter_map(|node| node.as_object())
            {
                let Some(handlers) = group.array_value("hooks") else {
                    continue;
                };
                for handler in handlers
                    .elements()
                    .iter()
                    .filter_map(|node| node.as_object())
                {
                    if let Some(command) = our_command(&handler, &self.host) {
                        ours.push(OurHandler {
                            event: event.name.clone(),
                            event_index,
                            group: group.clone(),
                            handlers: handlers.clone(),
                            handler,
                            command,
                        });
                    }
                }
            }
        }
        ours
    }

    /// Takes `handler` out, together with whichever of its group, its event and `hooks` itself
    /// would be left empty by that. The outermost container that empties is removed in one go,
    /// which reverses an insertion exactly.
    ///
    /// A group holding nothing but our handler is ours, comments and all. The event array and the
    /// `hooks` object are shared, so they stay (empty) when removing them would take a comment of
    /// the user's along.
    fn remove(&self, handler: &OurHandler) {
        let event = &self.events[handler.event_index];
        let group: CstNode = handler.group.clone().into();
        let event_prop: CstNode = event.prop.clone().into();
        if handler.handlers.elements().len() > 1 {
            handler.handler.clone().remove();
        } else if event.groups.elements().len() > 1
            || removal_drops_comments_outside(&event_prop, &group)
        {
            handler.group.clone().remove();
        } else if self.object.properties().len() > 1
            || removal_drops_comments_outside(&self.prop.clone().into(), &event_prop)
        {
            event.prop.clone().remove();
        } else {
            self.prop.clone().remove();
        }
    }
}

/// The command of a command handler of ours. Other handler types (`http`, `prompt`, ...) are never
/// ours, whatever fields they carry.
fn our_command(handler: &CstObject, host: &str) -> Option<String> {
    let is_command_type = match handler.get("type") {
        None => true,
        Some(prop) => prop.value().and_then(|v| string_value(&v)).as_deref() == Some("command"),
    };
    let command = string_property(handler, "command")?;
    (is_command_type && is_mnemo_hook_command_for(&command, host)).then_some(command)
}

enum Pairing {
    /// A handler of ours already is exactly what the spec asks for.
    Matches,
    /// The handler at this index of ours is the spec's entry but needs updating.
    Differs(usize),
    Missing,
}

struct Plan {
    /// One per spec, in spec order.
    pairings: Vec<Pairing>,
    /// Handlers of ours no spec claimed: duplicates and events mnemo no longer hooks.
    leftovers: Vec<usize>,
}

/// Decides which existing handler of ours each spec takes over: an exact match first, so that
/// reinstalling never churns, then the first unclaimed handler for the same event.
fn pair_specs_with_handlers(specs: &[HookSpec], ours: &[OurHandler]) -> Plan {
    let mut claimed = vec![false; ours.len()];
    let mut pairings: Vec<Option<Pairing>> = specs
        .iter()
        .map(|spec| {
            let index = (0..ours.len()).find(|&i| !claimed[i] && matches_spec(&ours[i], spec))?;
            claimed[index] = true;
            Some(Pairing::Matches)
        })
        .collect();
    for (spec, pairing) in specs.iter().zip(pairings.iter_mut()) {
        if pairing.is_none() {
            let index = (0..ours.len()).find(|&i| !claimed[i] && ours[i].event == spec.event);
            *pairing = Some(match index {
                Some(index) => {
                    claimed[index] = true;
                    Pairing::Differs(index)
                }
                None => Pairing::Missing,
            });
        }
    }
    Plan {
        pairings: pairings
            .into_iter()
            .map(|p| p.unwrap_or(Pairing::Missing))
            .collect(),
        leftovers: (0..ours.len()).filter(|&i| !claimed[i]).collect(),
    }
}

fn matches_spec(handler: &OurHandler, spec: &HookSpec) -> bool {
    handler.event == spec.event
        && handler.command == spec.command
        && timeout_matches(&handler.handler, spec.timeout_secs)
        && matcher_matches(&handler.group, spec.matcher.as_deref())
}

fn timeout_matches(handler: &CstObject, timeout_secs: u32) -> bool {
    let timeout = handler
        .get("timeout")
        .and_then(|prop| prop.to_serde_value());
    timeout.and_then(|value| value.as_f64()) == Some(f64::from(timeout_secs))
}

/// A spec without a matcher wants a group without a `matcher` key.
fn matcher_matches(group: &CstObject, matcher: Option<&str>) -> bool {
    match group.get("matcher") {
        None => matcher.is_none(),
        Some(prop) => {
            matcher.is_some() && prop.value().and_then(|v| string_value(&v)).as_deref() == matcher
        }
    }
}

/// Brings an older handler of ours up to `spec` without moving it. Returns false when that cannot
/// be done: the matcher differs and the group also holds handlers that are not ours, whose matcher
/// must not change, so the handler has to move to a group of its own instead.
fn update_in_place(handler: &OurHandler, spec: &HookSpec, host: &str) -> bool {
    if !matcher_matches(&handler.group, spec.matcher.as_deref()) {
        let group_is_ours_alone = handler.handlers.elements().iter().all(|node| {
            node.as_object()
                .and_then(|h| our_command(&h, host))
                .is_some()
        });
        if !group_is_ours_alone {
            return false;
        }
        match (handler.group.get("matcher"), &spec.matcher) {
            (Some(prop), Some(matcher)) => prop.set_value(matcher.as_str().into()),
            (Some(prop), None) => prop.remove(),
            (None, Some(matcher)) => {
                handler.group.insert(0, "matcher", matcher.as_str().into());
            }
            (None, None) => {}
        }
    }
    if handler.command != spec.command {
        match handler.handler.get("command") {
            Some(prop) => prop.set_value(spec.command.as_str().into()),
            None => {
                handler
                    .handler
                    .append("command", spec.command.as_str().into());
            }
        }
    }
    if !timeout_matches(&handler.handler, spec.timeout_secs) {
        match handler.handler.get("timeout") {
            Some(prop) => prop.set_value(spec.timeout_secs.into()),
            None => {
                handler.handler.append("timeout", spec.timeout_secs.into());
            }
        }
    }
    true
}

/// Appends a matcher group of our own for each spec: after the event's existing groups, after the
/// existing events, after the existing top-level keys, creating whatever is missing on the way.
fn add_groups(doc: &Document, section: Option<&HooksSection>, specs: &[&HookSpec]) {
    if specs.is_empty() {
        return;
    }
    // New events keep the order of the specs, with each event's groups together.
    let mut new_events: Vec<(&str, Vec<CstInputValue>)> = Vec::new();
    for spec in specs {
        if let Some(event) = section.and_then(|s| s.events.iter().find(|e| e.name == spec.event)) {
            event.groups.append(group_value(spec));
        } else if let Some((_, groups)) =
            new_events.iter_mut().find(|(name, _)| *name == spec.event)
        {
            groups.push(group_value(spec));
        } else {
            new_events.push((&spec.event, vec![group_value(spec)]));
        }
    }
    if new_events.is_empty() {
        return;
    }
    match section {
        Some(section) => {
            for (name, groups) in new_events {
                section.object.append(name, CstInputValue::Array(groups));
            }
        }
        None => {
            let events = new_events
                .into_iter()
                .map(|(name, groups)| (name.to_string(), CstInputValue::Array(groups)))
                .collect();
            doc.root_object_or_create()
                .append("hooks", CstInputValue::Object(events));
        }
    }
}

fn group_value(spec: &HookSpec) -> CstInputValue {
    let handler = CstInputValue::Object(vec![
        ("type".to_string(), "command".into()),
        ("command".to_string(), spec.command.as_str().into()),
        ("timeout".to_string(), spec.timeout_secs.into()),
    ]);
    let mut group = Vec::new();
    if let Some(matcher) = &spec.matcher {
        group.push(("matcher".to_string(), matcher.as_str().into()));
    }
    group.push(("hooks".to_string(), CstInputValue::Array(vec![handler])));
    CstInputValue::Object(group)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(host: &str, event: &str) -> HookSpec {
        HookSpec {
            event: event.to_owned(),
            matcher: None,
            command: format!("/bin/mnemo hook {host} {event}"),
            timeout_secs: 10,
        }
    }

    #[test]
    fn each_host_owns_only_its_own_entries() {
        let claude = plan_install_for("claude-code", "", &[spec("claude-code", "Stop")]).unwrap();
        let both = plan_install_for("codex", &claude.new_text, &[spec("codex", "Stop")]).unwrap();
        assert_eq!(
            both.changes.len(),
            1,
            "the Claude Code entry is not Codex's to update"
        );
        assert_eq!(
            find_mnemo_hooks_for("codex", &both.new_text).unwrap(),
            [("Stop".to_owned(), "/bin/mnemo hook codex Stop".to_owned())]
        );
        let without_codex = plan_uninstall_for("codex", &both.new_text).unwrap();
        assert_eq!(without_codex.new_text, claude.new_text);
        assert_eq!(find_mnemo_hooks(&without_codex.new_text).unwrap().len(), 1);
    }
}

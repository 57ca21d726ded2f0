//! Stage of the offline compressor that keeps the tracker ids a turn
//! mentions (in the user's prompt, the assistant's words, commit messages,
//! the first id a tool call's answer names) as facts of its observations, so "what's the ticket for X" finds them.
//! Ids are recognised by their generic forms: `ABC-123` (an upper-case
//! prefix), `#123` and `owner/repo#123`; names of standards and encodings
//! (`UTF-8`, `ISO-8859-1`, `SHA-256`), versions and dates are not ids.

use super::*;

/// At most this many ids told per observation.
const MAX_TICKETS: usize = 3;

/// Prefixes of standards, encodings and algorithms written like ids.
#[rustfmt::skip]
const STANDARDS: &[&str] = &[
    "UTF", "UCS", "ISO", "IEC", "IEEE", "SHA", "MD", "CRC", "AES", "RSA", "DES", "HMAC", "TLS",
    "SSL", "HTTP", "RFC", "CP", "IPV", "ES", "ECMA", "PEP", "CVE", "CWE", "ASCII", "ANSI",
    "WIN", "MS",
];

impl Analysis<'_> {
    /// Adds the turn's tracker ids to each observation, right after its
    /// first fact (so the facts cap keeps them).
    pub(super) fn attach_tickets(&self, drafts: &mut [Draft]) {
        let tickets = self.turn_tickets();
        if tickets.is_empty() {
            return;
        }
        let fact = format!("mentions ticket {}", join_and(&tickets));
        for d in drafts.iter_mut() {
            if !d.facts.contains(&fact) {
                d.facts.insert(d.facts.len().min(1), fact.clone());
            }
        }
    }

    /// The tracker ids of the prompt, the assistant's words and the commit
    /// messages, in order of first mention.
    fn turn_tickets(&self) -> Vec<String> {
        let mut texts: Vec<&str> = self.batch.prompt.as_deref().into_iter().collect();
        if let Some(n) = &self.batch.narrative {
            texts.extend(n.notes.iter().map(|note| note.text.as_str()));
            texts.extend(n.continues_request.as_deref());
        }
        texts.extend(self.runs.iter().filter_map(|r| r.commit.as_deref()));
        let mut ids: Vec<String> = texts.into_iter().flat_map(tickets_in).collect();
        // A tracker tool's answer names its own item first (the issue it
        // created or fetched); the rest of it is the item's text.
        ids.extend(self.events.iter().filter_map(|e| match &e.action {
            Action::Mcp { result, .. } if !e.failed => tickets_in(result).into_iter().next(),
            _ => None,
        }));
        let mut out: Vec<String> = Vec::new();
        for id in ids {
            if !out.contains(&id) && out.len() < MAX_TICKETS {
                out.push(id);
            }
        }
        out
    }
}

/// The tracker ids in `text`, in order.
pub(super) fn tickets_in(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || "-#/_.".contains(c)))
        .map(|w| w.trim_end_matches(['.', '-', '/']))
        .filter(|w| is_ticket(w))
        .map(str::to_owned)
        .collect()
}

/// `ABC-123`, `#123`, `owner/repo#123`.
fn is_ticket(w: &str) -> bool {
    if let Some((repo, number)) = w.rsplit_once('#') {
        let repo_ok = repo.is_empty() || is_repo(repo);
        return repo_ok && is_number(number);
    }
    match w.split_once('-') {
        Some((prefix, number)) => {
            is_number(number)
                && (2..=10).contains(&prefix.len())
                && prefix.chars().all(|c| c.is_ascii_uppercase())
                && !STANDARDS.contains(&prefix)
        }
        None => false,
    }
}

/// `owner/repo`.
fn is_repo(s: &str) -> bool {
    let part = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    s.split_once('/')
        .is_some_and(|(owner, name)| part(owner) && part(name))
}

/// 1 to 7 digits.
fn is_number(s: &str) -> bool {
    (1..=7).contains(&s.len()) && s.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::tickets_in;

    #[test]
    fn generic_id_forms_are_found() {
        assert_eq!(
            tickets_in("Fix PROJ-412 (see #87 and acme/web-app#1203), GH-9."),
            ["PROJ-412", "#87", "acme/web-app#1203", "GH-9"]
        );
    }

    #[test]
    fn standards_versions_dates_and_hashes_are_not_ids() {
        let text = "Read it as UTF-8 or ISO-8859-1, hash with SHA-256, v1.2-3, on \
                    2024-05-01, commit 3f2a9c1, color #fff, RFC-9110, x-12, Ab-3";
        assert!(tickets_in(text).is_empty(), "{:?}", tickets_in(text));
    }
}

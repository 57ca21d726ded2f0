//! Ids as people and agents type them.
//!
//! Observations are what the index lists, so they get the shortest form:
//! `#12` (a bare `12` means the same). Summaries and prompts live in tables
//! of their own with their own numbering, so they carry a letter: `S12` for
//! a turn summary, `P12` for a user prompt. `O12` is accepted for symmetry.
//! Parsing is forgiving about case, spaces and a `#` after the letter
//! (`s#12`); anything else is an input error that shows the accepted forms.

use std::fmt;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};

use crate::{RecallError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Observation,
    Summary,
    Prompt,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Observation => "observation",
            Kind::Summary => "summary",
            Kind::Prompt => "prompt",
        }
    }
}

/// One stored item: its kind and its row id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ItemRef {
    pub kind: Kind,
    pub id: i64,
}

impl ItemRef {
    pub fn observation(id: i64) -> ItemRef {
        ItemRef {
            kind: Kind::Observation,
            id,
        }
    }

    pub fn summary(id: i64) -> ItemRef {
        ItemRef {
            kind: Kind::Summary,
            id,
        }
    }

    pub fn prompt(id: i64) -> ItemRef {
        ItemRef {
            kind: Kind::Prompt,
            id,
        }
    }

    /// `12`, `#12`, `O12`, `S12`, `P12` (any case, `#` allowed after the letter).
    pub fn parse(text: &str) -> Result<ItemRef> {
        let t = text.trim();
        let (kind, rest) = match t.chars().next() {
            Some('s' | 'S') => (Kind::Summary, &t[1..]),
            Some('p' | 'P') => (Kind::Prompt, &t[1..]),
            Some('o' | 'O') => (Kind::Observation, &t[1..]),
            _ => (Kind::Observation, t),
        };
        let digits = rest.trim_start().trim_start_matches('#').trim_start();
        match digits.parse::<i64>() {
            Ok(id) if id > 0 && digits.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(ItemRef { kind, id })
            }
            _ => Err(RecallError::Input(format!(
                "`{text}` is not an id: use #12 (or 12) for an observation, S12 for a turn \
                 summary, P12 for a prompt"
            ))),
        }
    }

    /// Several ids separated by commas and/or white space (`12,#13 S4`).
    pub fn parse_list<S: AsRef<str>>(items: &[S]) -> Result<Vec<ItemRef>> {
        let mut out = Vec::new();
        for item in items {
            for part in item
                .as_ref()
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|p| !p.is_empty())
            {
                let id = ItemRef::parse(part)?;
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        }
        Ok(out)
    }
}

/// The display form, as [`mnemo_store::shape`] writes it in every record.
impl fmt::Display for ItemRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self.kind {
            Kind::Observation => mnemo_store::shape::observation_ref(self.id),
            Kind::Summary => mnemo_store::shape::summary_ref(self.id),
            Kind::Prompt => mnemo_store::shape::prompt_ref(self.id),
        };
        f.write_str(&text)
    }
}

/// An item's id as the two fields every record carries: `"id": 12,
/// "ref": "#12"` (for `#[serde(flatten, serialize_with = ...)]`).
pub fn as_fields<S: Serializer>(id: &ItemRef, s: S) -> Result<S::Ok, S::Error> {
    let mut fields = s.serialize_struct("ItemRef", 2)?;
    fields.serialize_field("id", &id.id)?;
    fields.serialize_field("ref", &id.to_string())?;
    fields.end()
}

/// Serialized as its display form (`"#12"`), which every tool accepts back.
impl Serialize for ItemRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_documented_forms() {
        assert_eq!(ItemRef::parse("12").unwrap(), ItemRef::observation(12));
        assert_eq!(ItemRef::parse(" #12 ").unwrap(), ItemRef::observation(12));
        assert_eq!(ItemRef::parse("o12").unwrap(), ItemRef::observation(12));
        assert_eq!(ItemRef::parse("S3").unwrap(), ItemRef::summary(3));
        assert_eq!(ItemRef::parse("s#3").unwrap(), ItemRef::summary(3));
        assert_eq!(ItemRef::parse("P7").unwrap(), ItemRef::prompt(7));
        for bad in ["", "#", "x1", "-3", "0", "1.5", "12a", "S", "#+4"] {
            assert!(ItemRef::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lists_split_and_dedupe_and_display_round_trips() {
        let ids = ItemRef::parse_list(&["12,#13", "S4  12", "P1"]).unwrap();
        assert_eq!(
            ids,
            [
                ItemRef::observation(12),
                ItemRef::observation(13),
                ItemRef::summary(4),
                ItemRef::prompt(1)
            ]
        );
        for id in ids {
            assert_eq!(ItemRef::parse(&id.to_string()).unwrap(), id);
        }
        assert_eq!(
            serde_json::to_string(&ItemRef::summary(4)).unwrap(),
            "\"S4\""
        );
    }

    #[test]
    fn records_carry_the_number_and_the_ref() {
        #[derive(Serialize)]
        struct Line {
            #[serde(flatten, serialize_with = "as_fields")]
            id: ItemRef,
            title: &'static str,
        }
        let line = Line {
            id: ItemRef::prompt(7),
            title: "t",
        };
        assert_eq!(
            serde_json::to_value(&line).unwrap(),
            serde_json::json!({"id": 7, "ref": "P7", "title": "t"})
        );
        // The store writes the same refs into every record.
        assert_eq!(ItemRef::observation(3).to_string(), "#3");
        assert_eq!(
            ItemRef::summary(3).to_string(),
            mnemo_store::shape::summary_ref(3)
        );
    }
}

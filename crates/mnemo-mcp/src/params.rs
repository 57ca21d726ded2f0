//! Tool arguments, with the JSON schemas agents see (doc comments become
//! the descriptions).
//!
//! Models do not always send the types a schema asks for, so reading is
//! forgiving where it costs nothing: numbers may come as strings, ids as
//! numbers or strings (`12`, `"#12"`, `"S3"`), a list of ids as a single
//! string (`"12, 13"`).

use mnemo_recall::{ItemRef, RecallError};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SearchParams {
    /// What to look for: any words (file paths, quotes and punctuation are fine). Every word must match; if none does, any word may.
    pub query: String,
    /// Project directory or name; default: the current project. "all" searches every project.
    #[serde(default)]
    pub project: Option<String>,
    /// Only these types (comma-separated): bugfix (fix), feature (feat), refactor, change, discovery, decision, memory; or summary, prompt.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Only observations about this file (absolute or relative path, or a file name).
    #[serde(default)]
    pub file: Option<String>,
    /// From this date on: 2026-11-22, RFC 3339, today, or a span ago such as 7d, 12h.
    #[serde(default)]
    pub since: Option<String>,
    /// Before this date (same forms as since; a day includes the whole day).
    #[serde(default)]
    pub until: Option<String>,
    /// Most results (default 10, at most 50).
    #[serde(default, deserialize_with = "lenient_u32")]
    #[schemars(with = "Option<u32>")]
    pub limit: Option<u32>,
    /// `text` (the default: one line per item, cheapest to read) or `json` (the records as `mnemo --json` and the HTTP API give them).
    #[serde(default)]
    pub format: Option<String>,
}

/// An id as an agent may send it: `12`, `"12"`, `"#12"`, `"S3"`, `"P7"`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum IdArg {
    Number(i64),
    Text(String),
}

impl IdArg {
    pub fn parse(&self) -> Result<ItemRef, RecallError> {
        match self {
            IdArg::Number(n) => ItemRef::parse(&n.to_string()),
            IdArg::Text(t) => ItemRef::parse(t),
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TimelineParams {
    /// The item to look around: an id from search (#12, S3, P7).
    pub id: IdArg,
    /// Items before it (default 5).
    #[serde(default, deserialize_with = "lenient_u32")]
    #[schemars(with = "Option<u32>")]
    pub before: Option<u32>,
    /// Items after it (default 5).
    #[serde(default, deserialize_with = "lenient_u32")]
    #[schemars(with = "Option<u32>")]
    pub after: Option<u32>,
    /// `text` (the default: one line per item, cheapest to read) or `json` (the records as `mnemo --json` and the HTTP API give them).
    #[serde(default)]
    pub format: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GetObservationsParams {
    /// Ids from search or timeline: ["#12", "S3", "P7"] (numbers mean observations).
    #[serde(deserialize_with = "lenient_ids")]
    pub ids: Vec<IdArg>,
    /// `text` (the default: one line per item, cheapest to read) or `json` (the records as `mnemo --json` and the HTTP API give them).
    #[serde(default)]
    pub format: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SaveMemoryParams {
    /// What to remember, self-contained: future sessions read it without today's context.
    pub text: String,
    /// A short title (default: the text's first line).
    #[serde(default)]
    pub title: Option<String>,
    /// The project directory (default: the current project).
    #[serde(default)]
    pub project: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CorrectParams {
    /// The observation to correct: its id from search or the index (#12).
    pub id: IdArg,
    /// true: delete the observation for good (it is wrong and not worth fixing).
    #[serde(default)]
    pub forget: bool,
    /// A corrected title.
    #[serde(default)]
    pub title: Option<String>,
    /// A corrected subtitle.
    #[serde(default)]
    pub subtitle: Option<String>,
    /// A corrected narrative.
    #[serde(default)]
    pub narrative: Option<String>,
    /// The corrected facts (replace the stored ones).
    #[serde(default)]
    pub facts: Option<Vec<String>>,
    /// A corrected type: bugfix, feature, refactor, change, discovery, decision, memory.
    #[serde(default, rename = "type")]
    pub obs_type: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ContextParams {
    /// The project: a directory, its stored path (even if it moved), or its name (default: the current project).
    #[serde(default)]
    pub project: Option<String>,
}

fn lenient_u32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    Ok(match v {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .map(|n| n.min(u64::from(u32::MAX)) as u32),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    })
}

fn lenient_ids<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<IdArg>, D::Error> {
    let v = Value::deserialize(d)?;
    let one = |v: Value| -> Vec<IdArg> {
        match v {
            Value::Number(n) => n.as_i64().map(IdArg::Number).into_iter().collect(),
            Value::String(s) => s
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|p| !p.is_empty())
                .map(|p| IdArg::Text(p.to_owned()))
                .collect(),
            _ => Vec::new(),
        }
    };
    Ok(match v {
        Value::Array(items) => items.into_iter().flat_map(one).collect(),
        other => one(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_read_forgivingly() {
        let p: SearchParams = serde_json::from_value(json!({"query": "x", "limit": "7"})).unwrap();
        assert_eq!(p.limit, Some(7));
        let p: SearchParams = serde_json::from_value(json!({"query": "x", "limit": 3.0})).unwrap();
        assert_eq!(p.limit, Some(3));
        let g: GetObservationsParams =
            serde_json::from_value(json!({"ids": [12, "#13", "S4 P5"]})).unwrap();
        let ids: Vec<ItemRef> = g.ids.iter().map(|i| i.parse().unwrap()).collect();
        assert_eq!(
            ids,
            [
                ItemRef::observation(12),
                ItemRef::observation(13),
                ItemRef::summary(4),
                ItemRef::prompt(5)
            ]
        );
        let g: GetObservationsParams = serde_json::from_value(json!({"ids": "12,13"})).unwrap();
        assert_eq!(g.ids.len(), 2);
        let t: TimelineParams = serde_json::from_value(json!({"id": 9, "before": "2"})).unwrap();
        assert_eq!(t.id.parse().unwrap(), ItemRef::observation(9));
        assert_eq!(t.before, Some(2));
    }
}

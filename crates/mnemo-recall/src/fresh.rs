//! Freshness of the records an interface is about to show (search hits,
//! the timeline): whether an observation's files changed or are gone since
//! it was recorded (see [`mnemo_store::freshness`]). Off the hook path, so
//! a file whose size or mtime moved is hashed before it is called changed.

use mnemo_store::freshness::{self, Check};
use rusqlite::Connection;

use crate::Result;
use crate::ids::Kind;
use crate::search::Hit;

/// Fills `freshness` of the observation hits that have file baselines.
pub fn mark_hits(conn: &Connection, hits: &mut [Hit]) -> Result<()> {
    for hit in hits.iter_mut().filter(|h| h.kind == Kind::Observation) {
        let root = hit.project.as_ref().map(|p| p.root.as_str());
        hit.freshness =
            freshness::of_observations(conn, &[hit.id.id], root, Check::Hash)?.remove(&hit.id.id);
    }
    Ok(())
}

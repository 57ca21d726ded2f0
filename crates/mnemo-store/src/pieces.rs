//! Partial summaries of a long turn's pieces.
//!
//! The queue leases a long turn in several pieces (flushed by age or size);
//! only the last one has the turn's end and gets the summary. Each earlier
//! piece leaves its partial summary here, written in the same transaction
//! as its observations, and the worker hands them to the last piece so that
//! the turn's summary covers the whole turn. Once the summary is stored,
//! the turn's pieces are deleted (same transaction).

use rusqlite::{Connection, params};

use crate::{Result, Store};

/// The partial summary of one piece of a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PieceSummary {
    pub request: String,
    pub investigated: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub notes: String,
}

/// A piece's partial summary, as the worker writes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewPiece {
    /// Derived from the lease, so that a redone piece is stored once.
    pub uid: String,
    pub session_id: i64,
    pub prompt_number: i64,
    pub summary: PieceSummary,
    pub created_at: i64,
}

/// Stores a piece (once per uid).
pub(crate) fn insert_piece(conn: &Connection, p: &NewPiece) -> rusqlite::Result<()> {
    let s = &p.summary;
    conn.execute(
        "INSERT INTO turn_pieces (uid, session_id, prompt_number, request, investigated,
                                  learned, completed, next_steps, notes, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (uid) DO NOTHING",
        params![
            p.uid,
            p.session_id,
            p.prompt_number,
            s.request,
            s.investigated,
            s.learned,
            s.completed,
            s.next_steps,
            s.notes,
            p.created_at
        ],
    )?;
    Ok(())
}

/// Forgets a turn's pieces (its summary now holds them).
pub(crate) fn delete_pieces(
    conn: &Connection,
    session_id: i64,
    prompt_number: i64,
) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM turn_pieces WHERE session_id = ?1 AND prompt_number = ?2",
        params![session_id, prompt_number],
    )?;
    Ok(())
}

impl Store {
    /// The partial summaries of a turn's earlier pieces, oldest first.
    pub fn turn_pieces(&self, session_id: i64, prompt_number: i64) -> Result<Vec<PieceSummary>> {
        let read = || -> rusqlite::Result<Vec<PieceSummary>> {
            let mut stmt = self.conn.prepare_cached(
                "SELECT request, investigated, learned, completed, next_steps, notes
                 FROM turn_pieces WHERE session_id = ?1 AND prompt_number = ?2 ORDER BY id",
            )?;
            stmt.query_map(params![session_id, prompt_number], |r| {
                Ok(PieceSummary {
                    request: r.get(0)?,
                    investigated: r.get(1)?,
                    learned: r.get(2)?,
                    completed: r.get(3)?,
                    next_steps: r.get(4)?,
                    notes: r.get(5)?,
                })
            })?
            .collect()
        };
        read().map_err(|e| self.err(e))
    }
}

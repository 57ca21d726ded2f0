//! Privacy at the edge (placeholder).
pub mod secrets;

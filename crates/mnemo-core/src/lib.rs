//! The shared vocabulary of mnemo (placeholder).
pub mod privacy;

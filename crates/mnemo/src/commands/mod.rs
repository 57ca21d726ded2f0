//! One module per command family.

pub mod doctor;
pub mod install;
pub mod transfer;

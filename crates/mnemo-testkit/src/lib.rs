//! Test support for mnemo (placeholder).

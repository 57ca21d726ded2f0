//! Wiring mnemo into agent hosts (placeholder; filled in by the installer work).

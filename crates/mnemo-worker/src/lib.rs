//! The background worker (issue 3). STUB: see the issue.

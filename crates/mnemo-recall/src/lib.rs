//! Recall (issue 4). STUB: see the issue.

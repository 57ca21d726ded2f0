//! The MCP server (issue 4). STUB: see the issue.

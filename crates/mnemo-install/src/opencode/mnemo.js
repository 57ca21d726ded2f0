// mnemo-opencode-plugin v1
// mnemo for OpenCode: forwards OpenCode's plugin callbacks to `mnemo hook opencode`
// (one JSON object on stdin each) and adds mnemo's memory of the project to the
// system prompt of every session. Written by `mnemo install --platform opencode`;
// `mnemo uninstall --platform opencode` removes it. Edits here are overwritten.
import { spawn, spawnSync } from "node:child_process";

const MNEMO = __MNEMO_BIN__;
// The memory index is asked for once per session, synchronously: the model
// call waits for it, at most this long.
const CONTEXT_TIMEOUT_MS = 3000;

const server = async ({ directory }) => {
  const contexts = new Map();
  // The assistant's messages (id -> session), and its text and reasoning
  // parts not yet sent (part id -> {session, text, reasoning}, in order):
  // those before a tool call go as the turn's narrative when the call
  // starts; the text after the last call is the answer sent at idle.
  const assistant = new Map();
  const parts = new Map();
  const take = (session) => {
    const taken = [];
    for (const [id, part] of parts) {
      if (part.session !== session) continue;
      taken.push(part);
      parts.delete(id);
    }
    return taken;
  };

  // Fire and forget: capture must never slow the agent down or fail it.
  const send = (payload) => {
    try {
      const child = spawn(MNEMO, ["hook", "opencode"], {
        stdio: ["pipe", "ignore", "ignore"],
      });
      child.on("error", () => {});
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify({ directory, ...payload }));
    } catch {}
  };

  // Waits for mnemo's answer; "" when there is none or it fails.
  const ask = (payload) => {
    try {
      const done = spawnSync(MNEMO, ["hook", "opencode"], {
        input: JSON.stringify({ directory, ...payload }),
        encoding: "utf8",
        timeout: CONTEXT_TIMEOUT_MS,
      });
      const answer = JSON.parse(done.stdout || "{}");
      return typeof answer.additional_context === "string" ? answer.additional_context : "";
    } catch {
      return "";
    }
  };

  return {
    "experimental.chat.system.transform": async (input, output) => {
      const id = input?.sessionID;
      if (!id) return;
      if (!contexts.has(id)) {
        contexts.set(id, ask({ hook_event_name: "session.start", session_id: id }));
      }
      const context = contexts.get(id);
      if (context && Array.isArray(output?.system)) output.system.push(context);
    },

    "chat.message": async (input, output) => {
      take(input?.sessionID);
      const prompt = (output?.parts ?? [])
        .filter((part) => part?.type === "text" && !part.synthetic && typeof part.text === "string")
        .map((part) => part.text)
        .join("\n");
      send({
        hook_event_name: "chat.message",
        session_id: input?.sessionID,
        message_id: input?.messageID ?? output?.message?.id,
        prompt,
      });
    },

    "tool.execute.before": async (input) => {
      const session = input?.sessionID;
      for (const part of take(session)) {
        send({ hook_event_name: "message.part", session_id: session, text: part.text, reasoning: part.reasoning });
      }
    },

    "tool.execute.after": async (input, output) => {
      const error = output?.metadata?.error;
      send({
        hook_event_name: "tool.execute.after",
        session_id: input?.sessionID,
        tool: input?.tool,
        call_id: input?.callID,
        args: input?.args ?? {},
        title: output?.title,
        output: typeof output?.output === "string" ? output.output : JSON.stringify(output?.output ?? ""),
        error: typeof error === "string" ? error : undefined,
      });
    },

    event: async ({ event }) => {
      if (event?.type === "message.updated") {
        const info = event.properties?.info;
        if (info?.role === "assistant" && info.id) assistant.set(info.id, info.sessionID);
      } else if (event?.type === "message.part.updated") {
        const part = event.properties?.part;
        const kind = part?.type === "reasoning" || (part?.type === "text" && !part.synthetic);
        if (kind && assistant.has(part.messageID) && typeof part.text === "string" && part.text.trim()) {
          parts.set(part.id, { session: part.sessionID, text: part.text, reasoning: part.type === "reasoning" });
        }
      } else if (event?.type === "session.idle") {
        const id = event.properties?.sessionID;
        const answer = take(id).filter((part) => !part.reasoning).map((part) => part.text).join("\n\n");
        send({ hook_event_name: "session.idle", session_id: id, last_assistant_message: answer || undefined });
        for (const [message, session] of assistant) if (session === id) assistant.delete(message);
      } else if (event?.type === "session.deleted") {
        contexts.delete(event.properties?.info?.id);
        send({ hook_event_name: "session.deleted", session_id: event.properties?.info?.id });
      }
    },
  };
};

// The plugin module shape of OpenCode 1.4 and later; file plugins need an `id`.
export default { id: "mnemo", server };

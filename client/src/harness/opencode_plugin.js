// memd's plugin for OpenCode: written by `memctl install`, removed by
// `memctl uninstall`. Each user message gets what memd finds relevant to it
// (`memctl hook opencode chat.message`), as a text part of its own; the end
// of each turn records the session for memd's evaluation (`memctl hook
// opencode session.idle`), its messages kept in memd's state directory.
// Every call is bounded and fails open: whatever goes wrong, the turn goes
// on without memd.
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const MEMD = __MEMD__;
const TIMEOUT_MS = 2000;
const FLUSH_MS = 5000;
const pending = new Set();

// `memctl hook opencode EVENT` with `input` as its JSON; its stdout, or ""
// on any failure.
function memctl(event, input) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    let child;
    let timer;
    const finish = (text) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        resolve(text);
      }
    };
    try {
      child = spawn(MEMD.memctl, ["hook", "opencode", event, ...MEMD.args], {
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      return finish("");
    }
    timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {}
      finish("");
    }, TIMEOUT_MS);
    child.on("error", () => finish(""));
    child.stdout.on("data", (d) => (out += d));
    child.on("close", (code) => finish(code === 0 ? out : ""));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
  });
}

// A part id in OpenCode's ascending layout, so memd's part comes after the
// user's text.
let counter = 0;
const B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
function partId() {
  const v = BigInt(Date.now()) * 4096n + BigInt(++counter % 4096);
  let r = "";
  for (let i = 0; i < 14; i++) r += B62[Math.floor(Math.random() * 62)];
  return "prt_" + v.toString(16).padStart(12, "0").slice(-12) + r;
}

// The session's messages not written yet, appended to its transcript, one
// `{info, parts}` a line; the file's path.
function transcript(sessionID, messages) {
  const state = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  const dir = join(state, "memd", "opencode");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, sessionID.replace(/[^A-Za-z0-9_-]/g, "_") + ".jsonl");
  const written = new Set();
  try {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      try {
        written.add(JSON.parse(line).info.id);
      } catch {}
    }
  } catch {}
  const lines = messages
    .filter((m) => m && m.info && !written.has(m.info.id))
    .map((m) => JSON.stringify(m) + "\n")
    .join("");
  if (lines) appendFileSync(file, lines, { mode: 0o600 });
  return file;
}

export const MemdPlugin = async ({ client, directory }) => {
  const track = (p) => {
    pending.add(p);
    p.finally(() => pending.delete(p));
  };
  return {
    "chat.message": async (input, output) => {
      try {
        const message = output.message;
        const prompt = output.parts
          .filter((p) => p.type === "text" && !p.synthetic)
          .map((p) => p.text)
          .join("\n");
        const out = await memctl("chat.message", {
          hook_event_name: "chat.message",
          session_id: message.sessionID,
          cwd: directory,
          prompt,
        });
        const text = out.trim() ? JSON.parse(out).additionalContext : "";
        if (!text) return;
        output.parts.push({
          id: partId(),
          sessionID: message.sessionID,
          messageID: message.id,
          type: "text",
          text,
          synthetic: true,
        });
      } catch {}
    },
    event: async ({ event }) => {
      try {
        if (event.type !== "session.idle") return;
        const id = event.properties.sessionID;
        track(
          (async () => {
            const res = await client.session.messages({ path: { id } });
            const file = transcript(id, res.data ?? []);
            await memctl("session.idle", {
              hook_event_name: "session.idle",
              session_id: id,
              cwd: directory,
              transcript_path: file,
            });
          })().catch(() => {}),
        );
      } catch {}
    },
    // Awaited by OpenCode before it exits; its event handlers are not.
    dispose: async () => {
      await Promise.race([
        Promise.allSettled([...pending]),
        new Promise((r) => setTimeout(r, FLUSH_MS)),
      ]);
    },
  };
};

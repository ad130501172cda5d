//! Doctor's check of memd's MCP server where an agent has it registered:
//! the registered command is started as the agent would start it, and
//! spoken to in MCP (initialize, the tool list, one search), so a pass
//! means the agent's tools reach a daemon.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use super::Check;
use crate::harness;
use crate::install::mcp_servers::Server;

/// How long each answer from the server may take.
const ANSWER_WAIT: Duration = Duration::from_secs(10);
/// The tools `memctl mcp` offers.
const TOOLS: [&str; 5] = ["explain", "feedback", "get", "remember", "search"];

/// The registrations in each agent's user configuration, each checked by
/// talking to it; a failure when none has one.
pub fn checks(home: &Path, cwd: &Path) -> Vec<Check> {
    let mut found = Vec::new();
    let mut checks = Vec::new();
    for harness in harness::ALL {
        match harness.mcp_server(home) {
            (file, Ok(server)) => found.extend(server.map(|s| (file, s))),
            (file, Err(err)) => checks.push(Check::fail(
                format!("mcp server in {}", file.display()),
                err,
                "fix the file, then `memctl install`",
            )),
        }
    }
    if found.is_empty() && checks.is_empty() {
        checks.push(Check::fail(
            "mcp server",
            format!(
                "memd's MCP server is registered with none of {}",
                harness::labels()
            ),
            "run `memctl install`",
        ));
    }
    for (file, server) in found {
        let name = format!("mcp server in {}", file.display());
        checks.push(match talk(&server, cwd) {
            Ok(()) => Check::pass(
                name,
                format!(
                    "`{} {}` answers with memd's tools and reaches memd on {}",
                    server.command,
                    server.args.join(" "),
                    server.socket().display()
                ),
            ),
            Err(err) => Check::fail(
                name,
                err,
                "run `memctl install` with the memctl you use now, and keep memd running on the socket it names",
            ),
        });
    }
    checks
}

/// The server, started and asked for its tools and one search.
fn talk(server: &Server, cwd: &Path) -> Result<(), String> {
    if !Path::new(&server.command).is_file() {
        return Err(format!("it runs {}, which does not exist", server.command));
    }
    let mut child = Command::new(&server.command)
        .args(&server.args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", server.command))?;
    let result = converse(&mut child);
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// The exchange with a started server.
fn converse(child: &mut Child) -> Result<(), String> {
    let mut input = child.stdin.take().ok_or("no stdin")?;
    let output = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |message: Value| {
        writeln!(input, "{message}").map_err(|e| format!("the server stopped reading: {e}"))
    };
    let answer = |id: u64| -> Result<Value, String> {
        loop {
            let line = rx
                .recv_timeout(ANSWER_WAIT)
                .map_err(|_| format!("no answer within {} s", ANSWER_WAIT.as_secs()))?;
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                return Err(format!("not MCP on stdout: {line}"));
            };
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    return Err(format!("error: {error}"));
                }
                return Ok(message["result"].clone());
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "memctl-doctor", "version": env!("CARGO_PKG_VERSION")}
        }}),
    )?;
    let info = answer(1)?;
    if info["serverInfo"]["name"] != "memd" {
        return Err(format!("it is not memd's server: {}", info["serverInfo"]));
    }
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))?;
    let tools = answer(2)?;
    let mut names: Vec<&str> = tools["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    names.sort_unstable();
    if names != TOOLS {
        return Err(format!("its tools are {names:?}, not memd's"));
    }
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "search", "arguments": {"text": "memd doctor", "limit": 1}
        }}),
    )?;
    let searched = answer(3)?;
    if searched["isError"] == true {
        let text = searched["content"][0]["text"].as_str().unwrap_or_default();
        return Err(format!("its search failed: {text}"));
    }
    Ok(())
}

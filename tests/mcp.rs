//! `memctl mcp` driven by the official MCP SDK's client (rmcp) over the
//! server's stdin and stdout, against the real daemon: the handshake, the
//! tool list, and each tool's effect on what memd knows and shows.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::*;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::ServiceExt;
use serde_json::{json, Value};

const LESSONS: &str = "# Team lessons. This comment stays.\nlessons:\n  - id: LESSON-POOL\n    text: >-\n      The Postgres connection pool is exhausted by long transactions in the\n      checkout worker; keep transactions short.\n    category: database   # reviewed\n";

/// A repository with a Rust manifest (so the hook's tags include `rust`).
fn repository(sandbox: &Sandbox) -> PathBuf {
    let repo = sandbox.dir.path().join("shop");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"shop\"\nversion = \"0.1.0\"\n\n[dependencies]\ntokio = \"1\"\n",
    )
    .unwrap();
    repo
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// An MCP session with `memctl mcp` started in `cwd` for `socket`.
struct Session {
    client: RunningService<RoleClient, ()>,
    _server: tokio::process::Child,
}

impl Session {
    async fn open(socket: &Path, cwd: &Path) -> Session {
        let mut server = tokio::process::Command::new(memctl_path())
            .arg("mcp")
            .arg("--socket")
            .arg(socket)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("memctl mcp starts");
        let output = server.stdout.take().unwrap();
        let input = server.stdin.take().unwrap();
        let client = ().serve((output, input)).await.expect("initialize");
        Session {
            client,
            _server: server,
        }
    }

    async fn call(&self, tool: &'static str, arguments: Value) -> CallToolResult {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object")
        };
        self.client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
            .await
            .unwrap_or_else(|err| panic!("{tool}: {err}"))
    }

    /// A call that must succeed; its text.
    async fn text(&self, tool: &'static str, arguments: Value) -> String {
        let result = self.call(tool, arguments).await;
        let text = text_of(&result);
        assert_ne!(result.is_error, Some(true), "{tool}: {text}");
        text
    }

    /// A call that must come back as a tool error; its text.
    async fn error(&self, tool: &'static str, arguments: Value) -> String {
        let result = self.call(tool, arguments).await;
        let text = text_of(&result);
        assert_eq!(result.is_error, Some(true), "{tool}: {text}");
        text
    }
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn an_mcp_client_lists_the_tools_and_each_one_works_against_the_daemon() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let repo = repository(&sandbox);
    let project_lessons = repo.join(".memd").join("lessons.yaml");
    std::fs::create_dir_all(project_lessons.parent().unwrap()).unwrap();
    std::fs::write(
        &project_lessons,
        LESSONS.replace("LESSON-POOL", "LESSON-LOCAL"),
    )
    .unwrap();
    let before = std::fs::read_to_string(&project_lessons).unwrap();
    let daemon = Daemon::start(&sandbox);

    runtime().block_on(async {
        let session = Session::open(&daemon.socket, &repo).await;

        // The handshake: who the server is, and how to use it.
        let info = session.client.peer_info().expect("initialized");
        assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("memd"));
        assert!(info.capabilities.tools.is_some());
        assert!(info.instructions.as_deref().unwrap_or("").contains("remember"));

        // The five tools, each with a description and a schema that says
        // what it needs.
        let tools = session.client.list_all_tools().await.unwrap();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort_unstable();
        assert_eq!(names, ["explain", "feedback", "get", "remember", "search"]);
        for tool in &tools {
            assert!(tool.description.as_deref().is_some_and(|d| d.len() > 20));
        }
        let required = |name: &str| -> Value {
            let tool = tools.iter().find(|t| t.name == name).unwrap();
            tool.input_schema.get("required").cloned().unwrap_or(json!([]))
        };
        assert_eq!(required("search"), json!(["text"]));
        assert_eq!(required("feedback"), json!(["id", "relevant"]));
        assert_eq!(required("remember"), json!(["kind"]));

        // search: best first, with kind, summary and source.
        let found = session
            .text("search", json!({"text": "postgres pool exhausted"}))
            .await;
        let first = found.lines().next().unwrap();
        assert!(first.contains(" lesson "), "{found}");
        assert!(first.contains("lessons.yaml:"), "{found}");
        assert!(found.contains("LESSON-POOL") && found.contains("LESSON-LOCAL"), "{found}");
        let only_gotchas = session
            .text("search", json!({"text": "postgres pool", "kinds": ["gotcha"]}))
            .await;
        assert!(only_gotchas.contains("Nothing"), "{only_gotchas}");
        // Any limit a model may send is taken (and capped), not a crash.
        let all = session
            .text("search", json!({"text": "postgres pool", "kinds": ["lesson"], "limit": u32::MAX}))
            .await;
        assert_eq!(all.lines().count(), 2, "{all}");

        // get: the item in full.
        let item = session.text("get", json!({"id": "LESSON-POOL"})).await;
        assert!(item.starts_with("LESSON-POOL (lesson) at "), "{item}");
        assert!(item.contains("category: database"), "{item}");
        assert!(item.contains("keep transactions short"), "{item}");

        // explain: shown or not, and why.
        let why = session
            .text(
                "explain",
                json!({"id": "LESSON-POOL", "task": "why is the postgres pool exhausted"}),
            )
            .await;
        assert!(why.starts_with("LESSON-POOL (lesson): shown"), "{why}");
        assert!(why.lines().count() > 1, "{why}");

        // feedback: seed 001's direct feedback, weight 2.0, for the tags of
        // the repository the server runs in: 0.3 x 2.0 x 1 = 0.600.
        let rated = session
            .text(
                "feedback",
                json!({"id": "LESSON-POOL", "relevant": true, "note": "fixed the checkout timeouts"}),
            )
            .await;
        assert!(rated.contains("+0.600"), "{rated}");
        let log = daemon.json(&["log", "LESSON-POOL"]);
        let tags = log["ok"]["log"][0]["tags"].as_array().unwrap().clone();
        let rust = tags.iter().find(|t| t["tag"] == "rust").expect("rust");
        assert!((rust["score"].as_f64().unwrap() - 0.6).abs() < 1e-9, "{log}");
        assert!(tags.iter().any(|t| t["tag"] == "shop"), "{log}");

        // remember: a gotcha in the project's knowledge; the next search
        // finds it; the file keeps its bytes and the loader accepts it.
        let remembered = session
            .text(
                "remember",
                json!({
                    "kind": "lesson",
                    "text": "Stripe webhook signatures fail when the body is parsed as JSON before verification.",
                    "tags": ["stripe"],
                }),
            )
            .await;
        assert!(remembered.contains("lessons.yaml"), "{remembered}");
        let id = remembered
            .strip_prefix("Remembered as ")
            .and_then(|r| r.split(' ').next())
            .unwrap()
            .to_string();
        let after = std::fs::read_to_string(&project_lessons).unwrap();
        assert!(after.starts_with(&before), "{after}");
        let out = run(&["validate", &project_lessons.display().to_string()]);
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        let found = session
            .text("search", json!({"text": "stripe webhook signature"}))
            .await;
        assert!(found.lines().next().unwrap().contains(&id), "{found}");
        let block = daemon.memctl(&[
            "query",
            "--task",
            "stripe webhook signatures fail",
            "--cwd",
            &repo.display().to_string(),
        ]);
        assert!(stdout(&block).contains("Stripe webhook signatures"), "{}", stdout(&block));

        // Errors are tool errors with the daemon's words.
        let unknown = session.error("get", json!({"id": "NOPE"})).await;
        assert!(unknown.contains("NOPE"), "{unknown}");
        let missing = session
            .error("remember", json!({"kind": "gotcha", "title": "no fix"}))
            .await;
        assert!(missing.contains("fix"), "{missing}");
        let kind = session
            .error("remember", json!({"kind": "observation", "text": "t"}))
            .await;
        assert!(kind.contains("cannot be added"), "{kind}");
        let scope = session
            .error("remember", json!({"kind": "lesson", "text": "t", "scope": "team"}))
            .await;
        assert!(scope.contains("project or personal"), "{scope}");
        // A credential is refused before anything is written.
        let secret = session
            .error(
                "remember",
                json!({"kind": "lesson", "text": "The staging key is sk_live_51HxYzAbCdEfGhIjKl, rotate it monthly"}),
            )
            .await;
        assert!(secret.contains("looks like it holds a Stripe key"), "{secret}");
        assert!(!std::fs::read_to_string(&project_lessons).unwrap().contains("sk_live"));
        session.client.cancel().await.unwrap();
    });

    // The note is in memd's log with the verdict.
    let log = std::fs::read_to_string(sandbox.dir.path().join("memd.log")).unwrap();
    assert!(log.contains("fixed the checkout timeouts"), "{log}");
}

#[test]
fn with_no_daemon_every_tool_says_so() {
    let sandbox = Sandbox::new();
    let repo = repository(&sandbox);
    let socket = sandbox.dir.path().join("run").join("memd.sock");
    runtime().block_on(async {
        let session = Session::open(&socket, &repo).await;
        let down = session.error("search", json!({"text": "anything"})).await;
        assert!(down.contains("memd is not running"), "{down}");
        assert!(down.contains("memd serve"), "{down}");
        let down = session
            .error("feedback", json!({"id": "X", "relevant": false}))
            .await;
        assert!(down.contains("not running"), "{down}");
        session.client.cancel().await.unwrap();
    });
}

//! `memctl install` on a fixture home: a dry run shows the merge, a real
//! install writes it with a backup, a second install changes nothing.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// `memctl install` with `HOME` at `home`, and a `codex` on the `PATH`
/// that says it is Codex 0.169.0.
fn install(home: &Path, args: &[&str]) -> std::process::Output {
    install_beside(home, args, "0.169.0")
}

/// `memctl install` beside a Codex of `version`.
fn install_beside(home: &Path, args: &[&str], version: &str) -> std::process::Output {
    use std::os::unix::fs::PermissionsExt;
    let bin = home.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let codex = bin.join("codex");
    std::fs::write(&codex, format!("#!/bin/sh\necho codex-cli {version}\n")).unwrap();
    std::fs::set_permissions(&codex, std::fs::Permissions::from_mode(0o755)).unwrap();
    memctl(home, "install", args)
}

/// `memctl COMMAND ARGS` with `HOME` (and its configuration) at `home` and
/// `home/fake-bin` first on the `PATH`.
fn memctl(home: &Path, command: &str, args: &[&str]) -> std::process::Output {
    let path = format!(
        "{}:{}",
        home.join("fake-bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new(env!("CARGO_BIN_EXE_memctl"))
        .arg(command)
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("PATH", path)
        .env_remove("MEMD_SOCKET")
        .output()
        .unwrap()
}

/// memd's MCP server as `memctl install` registers it in Codex's config.
fn codex_server() -> String {
    format!(
        "\n[mcp_servers.memd]\ncommand = \"{}\"\nargs = [\"mcp\"]\n# memd's tools run without asking, except `remember`, which writes into the repository.\ndefault_tools_approval_mode = \"approve\"\n\n[mcp_servers.memd.tools.remember]\napproval_mode = \"prompt\"\n",
        env!("CARGO_BIN_EXE_memctl")
    )
}

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn dry_run_then_install_then_nothing_to_do() {
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/claude-settings.json"
    ))
    .unwrap();
    std::fs::write(&settings, &fixture).unwrap();

    // Dry run: the merged document is shown, nothing is written.
    let dry = install(home.path(), &["--dry-run", "--agent", "backend-engineer"]);
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let shown = text(&dry);
    assert!(shown.contains("settings.json: would write"), "{shown}");
    let merged: Value = {
        let start = shown.find('{').unwrap();
        let end = shown[start..].find("\n}\n").map(|i| start + i + 2).unwrap();
        serde_json::from_str(&shown[start..end]).unwrap()
    };
    assert_eq!(merged["model"], "opus");
    assert_eq!(merged["permissions"]["deny"][0], "Read(./.env)");
    assert_eq!(merged["hooks"]["PreToolUse"][0]["matcher"], "Bash");
    // memd's MCP tools may run, except `remember` (it writes into the
    // repository), after the user's own rules.
    let allow = merged["permissions"]["allow"].as_array().unwrap();
    assert!(
        allow.contains(&Value::from("mcp__memd__feedback")),
        "{allow:?}"
    );
    assert!(
        !allow.contains(&Value::from("mcp__memd__remember")),
        "{allow:?}"
    );
    let prompt = merged["hooks"]["UserPromptSubmit"].as_array().unwrap();
    assert_eq!(prompt.len(), 2, "the user's own hook is kept");
    assert!(prompt[1]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .ends_with("memctl hook claude UserPromptSubmit --agent backend-engineer"));
    for event in ["SessionStart", "SessionEnd"] {
        assert!(merged["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .contains(&format!("hook claude {event}")));
    }
    assert!(
        shown.contains("memd.socket: would write"),
        "the service unit is part of it: {shown}"
    );
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        fixture,
        "a dry run writes nothing"
    );

    // The real install: merged, backed up, Codex's file created.
    let real = install(
        home.path(),
        &["--no-service", "--agent", "backend-engineer"],
    );
    assert!(real.status.success());
    assert!(text(&real).contains("(backup: "), "{}", text(&real));
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(written, merged);
    let codex: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".codex/hooks.json")).unwrap(),
    )
    .unwrap();
    for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
        assert!(codex["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .contains(&format!("hook codex {event}")));
    }
    assert!(
        codex["hooks"].get("SessionEnd").is_none(),
        "Codex has no SessionEnd"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap(),
        format!(
            "[features]\nhooks = true # memctl install\n{}",
            codex_server()
        ),
        "Codex runs hooks only with the feature on, and knows memd's MCP server"
    );
    // Claude Code's user scope has the MCP server as `claude mcp add` writes it.
    let claude: Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join(".claude.json")).unwrap())
            .unwrap();
    assert_eq!(
        claude["mcpServers"]["memd"],
        serde_json::json!({"type": "stdio", "command": env!("CARGO_BIN_EXE_memctl"), "args": ["mcp"], "env": {}})
    );
    let files = |dir: &Path| std::fs::read_dir(dir).unwrap().count();
    let before = files(settings.parent().unwrap());

    // Again: nothing changes, no new backup.
    let again = install(
        home.path(),
        &["--no-service", "--agent", "backend-engineer"],
    );
    assert!(text(&again).contains("already there"), "{}", text(&again));
    assert!(
        text(&again).contains("Codex hooks are on already, and memd's MCP server is registered"),
        "{}",
        text(&again)
    );
    assert!(
        text(&again).contains(".claude.json: memd's MCP server is registered already"),
        "{}",
        text(&again)
    );
    assert!(!text(&again).contains("written"));
    assert_eq!(files(settings.parent().unwrap()), before);
    assert_eq!(
        serde_json::from_str::<Value>(&std::fs::read_to_string(&settings).unwrap()).unwrap(),
        merged
    );
}

#[test]
fn codex_config_keeps_the_users_settings() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let mine = "model = \"gpt-5-codex\"\n\n[features]\nweb_search_request = true\n";
    std::fs::write(&config, mine).unwrap();
    let out = install(home.path(), &["--no-service"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        format!(
            "model = \"gpt-5-codex\"\n\n[features]\nweb_search_request = true\nhooks = true # memctl install\n{}",
            codex_server()
        )
    );
    let backups = std::fs::read_dir(config.parent().unwrap())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("config.toml.memd-backup-")
        })
        .count();
    assert_eq!(backups, 1);
    // Hooks turned off on purpose: said, not overridden.
    let off = format!("[features]\ncodex_hooks = false\n{}", codex_server());
    std::fs::write(&config, &off).unwrap();
    let out = install(home.path(), &["--no-service"]);
    assert!(text(&out).contains("left as it is"), "{}", text(&out));
    assert!(
        text(&out).contains("set `hooks = true` for memd's hooks to run"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), off);
    // With the server gone as well, the server comes back; the setting stays.
    std::fs::write(&config, "[features]\ncodex_hooks = false\n").unwrap();
    let out = install(home.path(), &["--no-service"]);
    assert!(
        text(&out).contains("written: `features.codex_hooks` is set to `false`"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), off);
}

#[test]
fn json_output_lists_each_step() {
    let home = tempfile::tempdir().unwrap();
    let out = install(home.path(), &["--dry-run", "--no-service", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let shown: Value = serde_json::from_str(&text(&out)).expect("JSON");
    let steps = shown["steps"].as_array().unwrap();
    assert!(shown["next"].as_array().unwrap().len() >= 3, "{shown}");
    let targets: Vec<&str> = steps
        .iter()
        .map(|s| s["target"].as_str().unwrap())
        .collect();
    // Agent by agent: Claude Code's settings and its MCP registration,
    // then Codex's hooks and config.
    assert!(targets[0].ends_with(".claude/settings.json"), "{targets:?}");
    assert!(targets[1].ends_with(".claude.json"), "{targets:?}");
    assert!(targets[2].ends_with(".codex/hooks.json"), "{targets:?}");
    assert!(targets[3].ends_with(".codex/config.toml"), "{targets:?}");
    for step in steps {
        // Gemini CLI and OpenCode are not on this machine (no ~/.gemini or
        // ~/.config/opencode, and not on the PATH): left out, and said.
        let outcome = match step["target"].as_str() {
            Some("Gemini CLI" | "OpenCode") => "not_found",
            _ => "would_write",
        };
        assert_eq!(step["outcome"], outcome, "{step}");
    }
    let settings: Value = serde_json::from_str(steps[0]["content"].as_str().unwrap()).unwrap();
    assert!(settings["hooks"]["SessionStart"].is_array());
    assert!(
        !home.path().join(".claude").exists(),
        "a dry run writes nothing"
    );
}

#[test]
fn a_broken_settings_file_is_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{ not json").unwrap();
    let out = install(home.path(), &["--no-service"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not JSON"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ not json");
}

#[test]
fn the_codex_feature_is_named_as_the_installed_codex_names_it() {
    // An older Codex reads the old name.
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".codex/config.toml");
    let out = install_beside(home.path(), &["--no-service"], "0.150.2");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        format!(
            "[features]\ncodex_hooks = true # memctl install\n{}",
            codex_server()
        )
    );
    assert!(text(&out).contains("Codex 0.150.2 runs memd's hooks only once you trust them"));
    // Codex upgraded: the deprecated name is renamed, nothing else moves.
    let out = install(home.path(), &["--no-service"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        format!(
            "[features]\nhooks = true # memctl install\n{}",
            codex_server()
        )
    );
}

#[test]
fn a_custom_socket_is_written_into_the_hooks_and_said() {
    let home = tempfile::tempdir().unwrap();
    let socket = home.path().join("my run").join("memd.sock");
    let out = install(
        home.path(),
        &["--no-service", "--socket", socket.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out));
    let quoted = format!("--socket '{}'", socket.display());
    for file in [".claude/settings.json", ".codex/hooks.json"] {
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(home.path().join(file)).unwrap())
                .unwrap();
        let command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(command.ends_with(&quoted), "{file}: {command}");
    }
    // The MCP server is started with the socket too.
    let claude: Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join(".claude.json")).unwrap())
            .unwrap();
    let socket_arg = socket.to_str().unwrap();
    assert_eq!(
        claude["mcpServers"]["memd"]["args"],
        serde_json::json!(["mcp", "--socket", socket_arg])
    );
    let codex = std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap();
    assert!(
        codex.contains(&format!("args = [\"mcp\", \"--socket\", \"{socket_arg}\"]")),
        "{codex}"
    );
    let said = text(&out);
    assert!(
        said.contains(&format!(
            "The hooks talk to memd on {}: it is written into each hook command",
            socket.display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!("`memd serve --socket '{}'`", socket.display())),
        "{said}"
    );
    // Installed again for the default socket: the commands lose the flag.
    let out = install(home.path(), &["--no-service"]);
    assert!(out.status.success());
    let claude = std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap();
    assert!(!claude.contains("--socket"), "{claude}");
    for file in [".claude.json", ".codex/config.toml"] {
        let text = std::fs::read_to_string(home.path().join(file)).unwrap();
        assert!(!text.contains("--socket"), "{file}: {text}");
    }
    assert!(text(&out).contains("the default path"), "{}", text(&out));
}

#[test]
fn claudes_user_file_keeps_everything_else() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".claude.json");
    let mine = r#"{
  "numStartups": 12,
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "gh-mcp",
      "args": [],
      "env": {}
    },
    "memd": {
      "type": "stdio",
      "command": "/old/memctl",
      "args": [
        "mcp"
      ],
      "env": {
        "RUST_LOG": "debug"
      }
    }
  },
  "autoUpdates": false
}
"#;
    std::fs::write(&file, mine).unwrap();
    let dry = install(home.path(), &["--no-service", "--dry-run"]);
    assert!(
        text(&dry).contains(".claude.json: would write"),
        "{}",
        text(&dry)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), mine);
    let out = install(home.path(), &["--no-service"]);
    assert!(out.status.success(), "{}", text(&out));
    // Only memd's command changed: the other keys, their order, the other
    // server and the env given to memd's are as they were.
    let expected = mine.replace("/old/memctl", env!("CARGO_BIN_EXE_memctl"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
    let backup = std::fs::read_dir(home.path())
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".claude.json.memd-backup-")
        })
        .expect("a backup");
    assert_eq!(std::fs::read_to_string(backup.path()).unwrap(), mine);
    let again = install(home.path(), &["--no-service"]);
    assert!(
        text(&again).contains("memd's MCP server is registered already"),
        "{}",
        text(&again)
    );
}

/// A fake `systemctl` in `home/fake-bin` (which the commands here put
/// first on the `PATH`), logging its arguments into `home/systemctl.log`.
fn fake_systemctl(home: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let bin = home.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let systemctl = bin.join("systemctl");
    std::fs::write(
        &systemctl,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\n",
            home.join("systemctl.log").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&systemctl, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `memctl uninstall` with `HOME` at `home`.
fn uninstall(home: &Path, args: &[&str]) -> std::process::Output {
    memctl(home, "uninstall", args)
}

/// Every file under `dir` (but memd's backups and the fake binaries) with
/// its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            if name.starts_with("fake-bin")
                || name.contains(".memd-backup-")
                || name.ends_with(".log")
            {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
                files.push((name, bytes));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn uninstall_gives_back_every_settings_file_to_the_byte() {
    let home = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = home.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    // The user's own files, laid out as they wrote them: tabs, one-line
    // lists, their own hooks and MCP servers, TOML comments, CRLF.
    write(
        ".claude/settings.json",
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/claude-settings.json"
        ))
        .unwrap(),
    );
    write(
        ".claude.json",
        "{\n\t\"numStartups\": 12,\n\t\"mcpServers\": {\n\t\t\"docs\": {\"type\": \"stdio\", \"command\": \"docs-mcp\", \"args\": []}\n\t},\n\t\"projects\": {\"/src/a\": {\"allowedTools\": []}}\n}",
    );
    write(
        ".codex/hooks.json",
        "{\n    \"hooks\": {\n        \"Stop\": [ { \"hooks\": [ { \"type\": \"command\", \"command\": \"notify-send done\" } ] } ]\n    }\n}\n",
    );
    write(
        ".codex/config.toml",
        "# my Codex\r\nmodel = \"gpt-5-codex\" # the good one\r\n\r\n[features]\r\nweb_search_request = true\r\n\r\n[mcp_servers.docs]\r\ncommand = \"docs-mcp\"\r\n",
    );
    // Gemini CLI's settings allow comments and trailing commas.
    write(
        ".gemini/settings.json",
        "{\n  // the theme I like\n  \"ui\": { \"theme\": \"GitHub\" },\n  \"hooks\": {\n    \"AfterAgent\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\", \"timeout\": 2000}]}],\n  },\n  \"mcpServers\": {\n    \"docs\": {\n      \"command\": \"docs-mcp\", /* mine */\n    },\n  },\n}\n",
    );
    // OpenCode's config allows comments too.
    write(
        ".config/opencode/opencode.jsonc",
        "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  // my model\n  \"model\": \"anthropic/claude-sonnet-4\",\n  \"permission\": {\n    \"bash\": \"ask\",\n  },\n  \"mcp\": {\n    \"docs\": {\"type\": \"local\", \"command\": [\"docs-mcp\"]},\n  },\n}\n",
    );
    let before = snapshot(home.path());

    fake_systemctl(home.path());
    let installed = install(home.path(), &[]);
    assert!(installed.status.success(), "{}", text(&installed));
    assert_ne!(snapshot(home.path()), before);
    let units = home.path().join(".config/systemd/user");
    assert!(units.join("memd.socket").exists());
    let gemini = std::fs::read_to_string(home.path().join(".gemini/settings.json")).unwrap();
    assert!(gemini.contains("hook gemini BeforeAgent"), "{gemini}");
    assert!(home.path().join(".gemini/policies/memd.toml").exists());
    assert!(home
        .path()
        .join(".config/opencode/plugins/memd.js")
        .exists());
    let opencode =
        std::fs::read_to_string(home.path().join(".config/opencode/opencode.jsonc")).unwrap();
    assert!(
        opencode.contains("\"memd_remember\": \"ask\""),
        "{opencode}"
    );

    // Installed again: nothing changes, for any of the four agents.
    let installed_files = snapshot(home.path());
    let again = install(home.path(), &[]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(!text(&again).contains(": written"), "{}", text(&again));
    assert_eq!(snapshot(home.path()), installed_files);

    // A dry run shows what would go, and changes nothing.
    let dry = uninstall(home.path(), &["--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry));
    assert!(
        text(&dry).contains("settings.json: would write"),
        "{}",
        text(&dry)
    );
    assert!(
        text(&dry).contains("memd.socket: would remove"),
        "{}",
        text(&dry)
    );
    assert_eq!(snapshot(home.path()), installed_files);

    let out = uninstall(home.path(), &[]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    let after = snapshot(home.path());
    for ((name, bytes), (was_name, was)) in after.iter().zip(&before) {
        assert_eq!(name, was_name, "{}", text(&out));
        assert_eq!(
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(was),
            "{name}"
        );
    }
    assert_eq!(after, before, "{}", text(&out));
    assert!(!units.join("memd.socket").exists());
    let log = std::fs::read_to_string(home.path().join("systemctl.log"))
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert!(
        log.contains("--user disable --now memd.socket memd.service"),
        "{log}"
    );
    // Each file it changed was backed up first.
    assert!(
        text(&out).matches("(backup: ").count() >= 4,
        "{}",
        text(&out)
    );

    // Again: nothing to take out.
    let again = uninstall(home.path(), &[]);
    assert!(again.status.success());
    assert!(!text(&again).contains("written"), "{}", text(&again));
    assert!(!text(&again).contains("removed"), "{}", text(&again));
    assert_eq!(snapshot(home.path()), before);
}

#[test]
fn uninstall_removes_the_files_install_made_and_leaves_other_hooks_alone() {
    let home = tempfile::tempdir().unwrap();
    let installed = install(home.path(), &["--no-service"]);
    assert!(installed.status.success(), "{}", text(&installed));
    // The user adds a hook of their own beside memd's after the install.
    let codex = home.path().join(".codex/hooks.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&codex).unwrap()).unwrap();
    doc["hooks"]["Stop"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"hooks": [{"type": "command", "command": "notify-send done"}]}));
    std::fs::write(&codex, serde_json::to_string_pretty(&doc).unwrap()).unwrap();

    let out = uninstall(home.path(), &["--no-service"]);
    assert!(out.status.success(), "{}", text(&out));
    for gone in [
        ".claude/settings.json",
        ".claude.json",
        ".codex/config.toml",
    ] {
        assert!(!home.path().join(gone).exists(), "{gone}: {}", text(&out));
    }
    let left: Value = serde_json::from_str(&std::fs::read_to_string(&codex).unwrap()).unwrap();
    assert_eq!(
        left,
        serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}})
    );
}

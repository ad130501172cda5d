//! The local page (`memctl ui`, issue 36) in a real headless Chromium,
//! driven through chromedriver (WebDriver), against the real daemon after
//! real hook calls.
//!
//! Needs Debian's `chromium` and `chromium-driver`; `.ci/run` installs them
//! and sets `MEMD_REQUIRE_BROWSER=1`, so CI fails without them. Elsewhere
//! the test says it skipped.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{stderr, stdout, Daemon, Sandbox};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

const PROMPT: &str =
    "Stripe retries our webhooks and we charge customers twice. Implement webhook idempotency in the charge handler.";

/// Knowledge of the test's own beside the example knowledge: one lesson
/// whose text is markup, one to retire.
const EXTRA: &str = "# lessons the page test adds\nlessons:\n  - id: L-XSS\n    text: \"Webhook idempotency <script>window.__memd_xss=1</script><img src=x onerror=\\\"window.__memd_xss=2\\\"> keep the Stripe event id\"\n    category: webhooks\n\n  - id: L-RETIRE\n    text: >-\n      Webhook retries from Stripe reuse the event id; store it with a\n      unique constraint before charging.\n    category: webhooks\n  - id: L-KEEP\n    text: Charge handlers log the idempotency key with every charge\n    category: payments\n";

/// EXTRA without L-RETIRE's lines.
const EXTRA_RETIRED: &str = "# lessons the page test adds\nlessons:\n  - id: L-XSS\n    text: \"Webhook idempotency <script>window.__memd_xss=1</script><img src=x onerror=\\\"window.__memd_xss=2\\\"> keep the Stripe event id\"\n    category: webhooks\n\n  - id: L-KEEP\n    text: Charge handlers log the idempotency key with every charge\n    category: payments\n";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `memctl hook claude UserPromptSubmit` with the prompt, from `cwd`.
fn prompt_hook(daemon: &Daemon, session: &str, cwd: &Path, state: &Path) -> String {
    let input = json!({
        "session_id": session,
        "transcript_path": cwd.join("transcript.jsonl"),
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": PROMPT,
    });
    let out = common::run_prompt_hook(&daemon.socket, state, &input);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

/// A raw GET on the page's port, as another program would send it.
fn raw_get(port: u16, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

struct Driver(std::process::Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn browser(port: u16, profile: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": CHROMIUM,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1200,900",
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    let mut last = None;
    for _ in 0..50 {
        match ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
        {
            Ok(client) => return client,
            Err(err) => last = Some(err),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not take a session: {last:?}");
}

/// Clicks what `locator` finds on the page as it is now.
async fn click(c: &Client, locator: Locator<'_>) {
    c.find(locator).await.unwrap().click().await.unwrap();
}

/// The text of what `css` finds, once the page has it.
async fn text_of(c: &Client, css: &str) -> String {
    c.wait()
        .for_element(Locator::Css(css))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

fn log_entry(daemon: &Daemon, id: &str) -> Value {
    daemon.json(&["log", id])["ok"]["log"][0].clone()
}

#[test]
fn the_page_shows_what_was_injected_and_takes_feedback_and_retires() {
    let have = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    if !have {
        assert!(
            std::env::var_os("MEMD_REQUIRE_BROWSER").is_none(),
            "MEMD_REQUIRE_BROWSER is set but {CHROMIUM} or {CHROMEDRIVER} is missing"
        );
        eprintln!("skipped: Debian's chromium and chromium-driver are not installed");
        return;
    }
    let sandbox = Sandbox::new();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("config/knowledge"),
        &sandbox.root().join("example"),
    );
    let extra = sandbox.write("extra/lessons.yaml", EXTRA);
    let repo = sandbox.dir.path().join("payflow-api");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let config = format!(
        "roots = []\n{}",
        std::fs::read_to_string(common::example_config())
            .unwrap()
            .split_once("[roles.")
            .map(|(_, roles)| format!("[roles.{roles}"))
            .unwrap_or_default()
    );
    std::fs::write(sandbox.config(), config).unwrap();
    let daemon = Daemon::start(&sandbox);
    let state = sandbox.dir.path().join("state");
    let block = prompt_hook(&daemon, "ui-session", &repo, &state);
    assert!(block.contains("L-RETIRE"), "{block}");

    let out = daemon.memctl(&["ui", "--no-open"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let url = stdout(&out).trim().to_string();
    let (address, token) = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split_once("/?token="))
        .unwrap_or_else(|| panic!("{url}"));
    let addr: std::net::SocketAddr = address.parse().unwrap();
    assert!(
        addr.ip().is_loopback(),
        "{addr}: the page listens on loopback only"
    );
    let port = addr.port();
    // Asked again, the page is found, not started twice.
    assert_eq!(stdout(&daemon.memctl(&["ui", "--no-open"])).trim(), url);
    // Without the token: refused.
    let refused = raw_get(port, "/session/ui-session");
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    assert!(!refused.contains("L-RETIRE"));
    let wrong_host = {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            stream,
            "GET /?token={token} HTTP/1.1\r\nHost: attacker.example:{port}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    };
    assert!(wrong_host.starts_with("HTTP/1.1 403"), "{wrong_host}");
    // The first address sends the browser on to a path of the page's own.
    let first = raw_get(port, &format!("//elsewhere.example/?token={token}"));
    assert!(first.starts_with("HTTP/1.1 303"), "{first}");
    assert!(
        first.to_lowercase().contains("\r\nlocation: /\r\n"),
        "{first}"
    );

    let driver_port = free_port();
    let profile = sandbox.dir.path().join("chromium-profile");
    let _driver = Driver(
        Command::new(CHROMEDRIVER)
            .arg(format!("--port={driver_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let screenshot: PathBuf = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ui-session.png");
    runtime.block_on(async {
        let c = browser(driver_port, &profile).await;
        // The session list shows the session; its page the block and every
        // item with its score.
        c.goto(&url).await.unwrap();
        assert!(!c.current_url().await.unwrap().as_str().contains("token"));
        click(&c, Locator::LinkText("ui-session")).await;
        let shown = text_of(&c, "pre.block").await;
        assert!(
            shown.contains("[L-RETIRE]") && shown.contains("<memd-knowledge>"),
            "{shown}"
        );
        let rows = c.find_all(Locator::Css("tr.shown")).await.unwrap();
        assert!(rows.len() >= 3, "{} rows", rows.len());
        for row in &rows {
            let score = row
                .find(Locator::Css("td.score"))
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(score.parse::<f64>().is_ok(), "score `{score}`");
        }
        let png = c.screenshot().await.unwrap();
        std::fs::write(&screenshot, &png).unwrap();
        if let Some(copy) = std::env::var_os("MEMD_UI_SCREENSHOT") {
            std::fs::write(copy, &png).unwrap();
        }
        // "not relevant" on one item: the verdict is in memctl log.
        click(
            &c,
            Locator::Css("button[data-action='not-relevant'][data-item='L-KEEP']"),
        )
        .await;
        let noted = match c.wait().for_element(Locator::Css("p.notice")).await {
            Ok(e) => e,
            Err(err) => panic!("{err}: {}", c.source().await.unwrap()),
        }
        .text()
        .await
        .unwrap();
        assert!(noted.contains("L-KEEP is not relevant"), "{noted}");
        let entry = log_entry(&daemon, "L-KEEP");
        let negative: u64 = entry["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["negative"].as_u64().unwrap())
            .max()
            .unwrap_or(0);
        assert_eq!(negative, 1, "{entry}");
        // Pin by hand for the session's tags, then unpin. The item's page
        // says why it is shown, as memctl explain does.
        c.goto(&format!("http://{address}/item/L-KEEP"))
            .await
            .unwrap();
        let reasons = c
            .find(Locator::Css("ul.reasons"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(reasons.contains("tag relevance"), "{reasons}");
        click(&c, Locator::Css("button[data-action='pin']")).await;
        c.wait()
            .for_element(Locator::Css("button[data-action='unpin']"))
            .await
            .unwrap();
        let pinned = log_entry(&daemon, "L-KEEP")["pinned"].clone();
        assert!(
            pinned
                .as_str()
                .is_some_and(|p| p.starts_with("manual for [") && p.contains("payflow-api")),
            "{pinned}"
        );
        click(&c, Locator::Css("button[data-action='unpin']")).await;
        common::eventually("the unpin is recorded", || {
            log_entry(&daemon, "L-KEEP")["pinned"].is_null()
        });
        c.wait()
            .for_element(Locator::Css("button[data-action='pin']"))
            .await
            .unwrap();
        // An item whose text is markup renders as text, and runs nothing.
        c.goto(&format!("http://{address}/item/L-XSS"))
            .await
            .unwrap();
        // Read once the item's page is there (under load the source could
        // be read while the navigation was still under way, and was empty).
        c.wait()
            .for_element(Locator::XPath("//body[contains(., '__memd_xss')]"))
            .await
            .unwrap();
        let source = c.source().await.unwrap();
        assert!(
            source.contains("&lt;script&gt;window.__memd_xss=1&lt;/script&gt;"),
            "{source}"
        );
        assert!(!source.contains("<script>"), "{source}");
        let ran = c
            .execute("return typeof window.__memd_xss;", vec![])
            .await
            .unwrap();
        assert_eq!(ran, json!("undefined"));
        // Retiring: a confirmation, then exactly its lines go.
        c.goto(&format!("http://{address}/item/L-RETIRE"))
            .await
            .unwrap();
        click(&c, Locator::Css("a.retire")).await;
        let going = text_of(&c, "pre.removed").await;
        assert!(going.contains("id: L-RETIRE"), "{going}");
        assert_eq!(
            std::fs::read_to_string(&extra).unwrap(),
            EXTRA,
            "nothing yet"
        );
        click(&c, Locator::Id("confirm-retire")).await;
        let notice = text_of(&c, "p.notice").await;
        assert!(notice.contains("Retired L-RETIRE"), "{notice}");
        c.close().await.unwrap();
    });
    assert_eq!(std::fs::read_to_string(&extra).unwrap(), EXTRA_RETIRED);
    let backups = std::fs::read_dir(extra.parent().unwrap())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("memd-backup")
        })
        .count();
    assert_eq!(backups, 1);
    // A new session's same prompt: everything as before but the retired.
    let after = prompt_hook(&daemon, "ui-session-2", &repo, &state);
    assert!(
        after.contains("[L-KEEP]") || after.contains("[L-XSS]"),
        "{after}"
    );
    assert!(!after.contains("L-RETIRE"), "{after}");
    let got = daemon.memctl(&["get", "L-RETIRE"]);
    assert!(!got.status.success());
    assert!(screenshot.exists());
}

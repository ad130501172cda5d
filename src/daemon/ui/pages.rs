//! The local page's pages and forms. Every answer is built from what the
//! daemon's own requests answer (status, log, explain, search, feedback),
//! so the page says what `memctl` says; every text from a knowledge file,
//! a prompt or a block is escaped by `maud`.

use std::collections::BTreeMap;

use axum::extract::{Form, Path, Query as UrlQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{html, Markup, DOCTYPE};
use serde::Deserialize;

use crate::knowledge::view;
use crate::protocol::{
    Explanation, ItemView, LogEntry, Query, Reply, RequestBody, Response as Answer, StatusReport,
};

use super::{plot, Page};

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}\
header{background:#243447;color:#fff;padding:.6em 1.2em}header a{color:#fff;margin-right:1.2em;text-decoration:none}\
main{padding:1em 1.2em;max-width:1100px}pre{background:#fff;border:1px solid #ddd;padding:.6em;white-space:pre-wrap;word-break:break-word}\
table{border-collapse:collapse;width:100%;background:#fff}td,th{border:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top}\
th{background:#eef1f4}.muted{color:#666}.bad{color:#a40000}form.inline{display:inline}button{cursor:pointer}\
.notice{background:#fff6d6;border:1px solid #e8d48a;padding:.5em}svg{background:#fff;border:1px solid #ddd}";

/// The page's frame around `body`.
fn frame(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "memd: " (title) }
                link rel="stylesheet" href="/style.css";
            }
            body {
                header {
                    a href="/" { "Sessions" }
                    a href="/evaluations" { "Evaluations" }
                    a href="/status" { "Knowledge & hooks" }
                    form.inline action="/search" method="get" {
                        input type="search" name="q" placeholder="Search the knowledge" aria-label="Search the knowledge";
                        " "
                        button type="submit" { "Search" }
                    }
                }
                main {
                    h1 { (title) }
                    (body)
                }
            }
        }
    }
}

/// The style sheet (the page's only other resource).
pub async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

/// Runs a request as `memctl` would, off the async threads.
async fn ask(page: &Page, request: RequestBody) -> Answer {
    let handler = page.handler.clone();
    tokio::task::spawn_blocking(move || handler.handle(request))
        .await
        .unwrap_or_else(|e| Answer::error(crate::protocol::ErrorKind::Internal, e.to_string()))
}

fn reply(answer: Answer) -> Result<Reply, String> {
    match answer.outcome {
        crate::protocol::Outcome::Ok(reply) => Ok(reply),
        crate::protocol::Outcome::Error(err) => Err(err.message),
    }
}

fn not_found(what: String) -> Response {
    (
        StatusCode::NOT_FOUND,
        frame("Not found", html! { p.bad { (what) } }),
    )
        .into_response()
}

fn when(at: i64) -> String {
    jiff::Timestamp::from_second(at)
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|_| at.to_string())
}

fn item_link(id: &str) -> Markup {
    html! { a href={ "/item/" (urlencode(id)) } { (id) } }
}

/// `s` for a path segment or a query value.
fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[derive(Deserialize)]
pub struct Notice {
    retired: Option<String>,
}

/// Sessions, newest first: those answered since the daemon started (with
/// their blocks), then the others it audited.
pub async fn sessions(State(page): State<Page>, UrlQuery(notice): UrlQuery<Notice>) -> Markup {
    struct Row {
        session: String,
        at: i64,
        agent: String,
        place: String,
        prompts: usize,
        items: usize,
    }
    let mut rows: Vec<Row> = Vec::new();
    {
        let injections = page
            .handler
            .shared
            .injections
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for i in injections.newest_first() {
            match rows.iter_mut().find(|r| r.session == i.session) {
                Some(row) => {
                    row.prompts += 1;
                    row.items += i.answer.items.len();
                }
                None => rows.push(Row {
                    session: i.session.clone(),
                    at: i.at,
                    agent: i.query.agent.clone().unwrap_or_default(),
                    place: i.query.place().unwrap_or_default().to_string(),
                    prompts: 1,
                    items: i.answer.items.len(),
                }),
            }
        }
    }
    let mut older: Vec<(String, i64, usize, Option<String>)> = page
        .handler
        .shared
        .sessions()
        .iter()
        .filter(|(id, _)| !rows.iter().any(|r| &r.session == *id))
        .map(|(id, a)| (id.clone(), a.updated_at, a.shown.len(), a.repo.clone()))
        .collect();
    older.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    frame(
        "Sessions",
        html! {
            @if let Some(id) = notice.retired {
                p.notice { "Retired " (id) ": its lines were taken out of its file (a backup is beside it)." }
            }
            @if rows.is_empty() && older.is_empty() {
                p.muted { "No session has asked memd anything yet." }
            }
            @if !rows.is_empty() {
                table {
                    tr { th { "Session" } th { "Last answer" } th { "Agent role" } th { "Repository" } th { "Prompts" } th { "Items shown" } }
                    @for r in &rows {
                        tr {
                            td { a href={ "/session/" (urlencode(&r.session)) } { (r.session) } }
                            td { (when(r.at)) }
                            td { (r.agent) }
                            td { (r.place) }
                            td { (r.prompts) }
                            td { (r.items) }
                        }
                    }
                }
            }
            @if !older.is_empty() {
                h2 { "Earlier sessions" }
                p.muted { "Audited before this daemon started: what was shown is kept, the blocks are not." }
                table {
                    tr { th { "Session" } th { "Last change" } th { "Items shown" } th { "Repository" } }
                    @for (id, at, shown, repo) in &older {
                        tr {
                            td { a href={ "/session/" (urlencode(id)) } { (id) } }
                            td { (when(*at)) }
                            td { (shown) }
                            td { (repo.clone().unwrap_or_default()) }
                        }
                    }
                }
            }
        },
    )
}

/// A feedback form: relevant or not for these tags.
fn feedback_form(page: &Page, id: &str, tags: &[String], back: &str, relevant: bool) -> Markup {
    html! {
        form.inline action="/feedback" method="post" {
            input type="hidden" name="id" value=(id);
            input type="hidden" name="tags" value=(tags.join(","));
            input type="hidden" name="back" value=(back);
            input type="hidden" name="relevant" value=(if relevant { "yes" } else { "no" });
            input type="hidden" name="form_token" value=(page.running.form_token);
            button type="submit" data-action=(if relevant { "relevant" } else { "not-relevant" }) data-item=(id) {
                (if relevant { "relevant" } else { "not relevant" })
            }
        }
    }
}

fn dimensions(d: &BTreeMap<String, f64>) -> String {
    d.iter()
        .map(|(k, v)| format!("{k} {v:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One session: each prompt, the block injected, every item with its
/// score, and the strongest candidates that were not shown, and why.
#[derive(Deserialize)]
pub struct Noted {
    noted: Option<String>,
    relevant: Option<bool>,
}

pub async fn session(
    State(page): State<Page>,
    Path(id): Path<String>,
    UrlQuery(noted): UrlQuery<Noted>,
) -> Response {
    let injections = page
        .handler
        .shared
        .injections
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .of(&id);
    let audit = page.handler.shared.sessions().get(&id).cloned();
    if injections.is_empty() && audit.is_none() {
        return not_found(format!("no session `{id}` is known"));
    }
    let back = format!("/session/{}", urlencode(&id));
    // What the judge said of each item this session showed.
    let verdicts: Vec<(String, f64, f64)> = audit
        .iter()
        .flat_map(|a| a.shown.iter())
        .flat_map(|item| {
            page.handler
                .store
                .journal(item)
                .unwrap_or_default()
                .into_iter()
                .filter(|(_, j)| j.session.as_deref() == Some(id.as_str()))
                .map(|(_, j)| (item.clone(), j.raw, j.weight))
                .collect::<Vec<_>>()
        })
        .collect();
    let problem = page
        .handler
        .shared
        .evaluation_problems
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .cloned();
    let mut parts = Vec::new();
    for injection in &injections {
        let shown: Vec<&str> = injection
            .answer
            .items
            .iter()
            .map(|i| i.id.as_str())
            .collect();
        let mut others: Vec<Explanation> = Vec::new();
        if !injection.query.task.trim().is_empty() {
            let search = RequestBody::Search {
                text: injection.query.task.clone(),
                limit: 12,
                query: injection.query.clone(),
            };
            if let Ok(Reply::Hits(hits)) = reply(ask(&page, search).await) {
                for hit in hits
                    .iter()
                    .filter(|h| !shown.contains(&h.id.as_str()))
                    .take(5)
                {
                    let explain = RequestBody::Explain {
                        id: hit.id.clone(),
                        query: Query {
                            session_id: None,
                            ..injection.query.clone()
                        },
                    };
                    if let Ok(Reply::Explanation(e)) = reply(ask(&page, explain).await) {
                        others.push(e);
                    }
                }
            }
        }
        let tags = injection.query.tags.clone();
        parts.push(html! {
            section {
                h2 { (when(injection.at)) }
                @if injection.query.task.trim().is_empty() {
                    p.muted { "Session start (no prompt)." }
                } @else {
                    h3 { "Prompt" }
                    pre.prompt { (injection.query.task) }
                }
                h3 { "Injected" }
                @if injection.answer.block.is_empty() {
                    p.muted { "Nothing: no item was relevant." }
                } @else {
                    pre.block { (injection.answer.block) }
                    table {
                        tr { th { "Item" } th { "Kind" } th { "Score" } th { "Dimensions" } th { "Source" } th { "Was it relevant here?" } }
                        @for item in &injection.answer.items {
                            tr.shown data-item=(item.id) {
                                td { (item_link(&item.id)) }
                                td { (item.kind.to_string()) }
                                td.score { (format!("{:.4}", item.score)) }
                                td { (dimensions(&item.dimensions)) }
                                td { (item.source) }
                                td {
                                    (feedback_form(&page, &item.id, &tags, &back, true))
                                    " "
                                    (feedback_form(&page, &item.id, &tags, &back, false))
                                }
                            }
                        }
                    }
                }
                @if !others.is_empty() {
                    h3 { "Strongest candidates not shown" }
                    table {
                        tr { th { "Item" } th { "Score" } th { "Why not" } }
                        @for e in &others {
                            tr {
                                td { (item_link(&e.id)) }
                                td { (e.score.map(|s| format!("{s:.4}")).unwrap_or_else(|| "-".into())) }
                                td {
                                    details {
                                        summary { (e.reasons.last().cloned().unwrap_or_default()) }
                                        ul { @for r in &e.reasons { li { (r) } } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        });
    }
    let body = html! {
        @if let Some(item) = &noted.noted {
            p.notice {
                "Recorded: " (item) " is "
                (if noted.relevant == Some(true) { "relevant" } else { "not relevant" })
                " for this session's tags (direct feedback, weight 2.0; see its page or memctl log)."
            }
        }
        @if let Some(a) = &audit {
            p {
                "Repository: " (a.repo.clone().unwrap_or_default())
                "; tags: " (a.tags.join(", "))
                "; shown: " (a.shown.len()) " item(s), " (a.judged) " judged; "
                (if a.processed { "evaluated" } else if a.ended { "ended, waiting for evaluation" } else { "open" })
            }
        }
        @if let Some(why) = &problem { p.bad { "Its last evaluation: " (why) } }
        @if !verdicts.is_empty() {
            h2 { "What the judge said" }
            table {
                tr { th { "Item" } th { "Verdict" } }
                @for (item, raw, _) in &verdicts {
                    tr.verdict {
                        td { (item_link(item)) }
                        td { (if *raw > 0.0 { "relevant" } else { "not relevant" }) " (" (format!("{raw:+.2}")) ")" }
                    }
                }
            }
        }
        @if injections.is_empty() {
            p.muted { "Its blocks are not kept (answered before this daemon started). Items shown: " }
            @if let Some(a) = &audit { ul { @for i in &a.shown { li { (item_link(i)) } } } }
        }
        @for part in parts { (part) }
    };
    frame(&format!("Session {id}"), body).into_response()
}

fn find_item(page: &Page, id: &str) -> Option<ItemView> {
    let k = page.handler.shared.read();
    k.engine.get_anywhere(id).map(|i| view::view(i))
}

/// One item: its text and source, where it was shown, what was learned
/// about it (per tag, the team's), its score over its verdicts, and a way
/// to retire it.
pub async fn item(State(page): State<Page>, Path(id): Path<String>) -> Response {
    let Some(view) = find_item(&page, &id) else {
        return not_found(format!("no item `{id}` is loaded"));
    };
    let entry: Option<LogEntry> = match reply(
        ask(
            &page,
            RequestBody::Log {
                id: Some(id.clone()),
                sort_by_score: false,
            },
        )
        .await,
    ) {
        Ok(Reply::Log(mut entries)) => entries.pop(),
        _ => None,
    };
    let last_tags = page
        .handler
        .shared
        .last_shown(&id)
        .map(|l| l.tags)
        .unwrap_or_default();
    // Why it is shown or not, for the latest prompt that showed it: what
    // `memctl explain` says (filtered, on trial, pinned, and why).
    let latest = page
        .handler
        .shared
        .injections
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .newest_first()
        .find(|i| i.answer.items.iter().any(|s| s.id == id))
        .map(|i| i.query.clone());
    let why = match latest {
        Some(query) => {
            let explain = RequestBody::Explain {
                id: id.clone(),
                query: Query {
                    session_id: None,
                    ..query.clone()
                },
            };
            match reply(ask(&page, explain).await) {
                Ok(Reply::Explanation(e)) => Some((query.task, e)),
                _ => None,
            }
        }
        None => None,
    };
    let (shown, journal, pins, line) = {
        let learned = page.handler.shared.learned();
        let pins = learned.pins_of(&id).to_vec();
        let shown: Vec<(String, u32)> = learned
            .matches
            .get(&id)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default();
        let journal = page.handler.store.journal(&id).unwrap_or_default();
        (shown, journal, pins, learned.filter_line())
    };
    let verdicts: Vec<(f64, f64)> = journal
        .iter()
        .filter(|(_, j)| j.tags.iter().any(|t| t == "*"))
        .map(|(_, j)| (j.raw, j.weight))
        .collect();
    let body = html! {
        p { "Source: " code { (view.source) } "; kind " (view.kind.to_string()) @if !view.tags.is_empty() { "; tags " (view.tags.join(", ")) } }
        table {
            @for (name, value) in &view.fields {
                tr { th { (name) } td { pre.field { (value) } } }
            }
        }
        h2 { "Where it was shown" }
        @if shown.is_empty() { p.muted { "Not shown to a session yet." } }
        @else {
            table {
                tr { th { "Context (tags)" } th { "Sessions shown" } }
                @for (context, n) in &shown { tr { td { (context) } td { (n) } } }
            }
        }
        h2 { "Why, now, for the latest prompt that showed it" }
        @match &why {
            Some((task, e)) => {
                p { "Prompt: " q { (task) } "; " (if e.shown { "it would be shown" } else { "it would not be shown" })
                    @if let Some(s) = e.score { ", score " (format!("{s:.4}")) } }
                ul.reasons { @for r in &e.reasons { li { (r) } } }
            }
            None => { p.muted { "No prompt showed it since the daemon started." } }
        }
        h2 { "Pins" }
        @if pins.is_empty() { p.muted { "Not pinned by memd (a pin in its file, `pinned: true`, is the file's)." } }
        @else {
            table {
                tr { th { "Pin" } th { "Where" } th { "" } }
                @for p in &pins {
                    tr {
                        td { (if p.manual { "by hand" } else { "automatic (seed 001)" }) }
                        td { (if p.tags.is_empty() { "everywhere".to_string() } else { format!("where a query has [{}]", p.tags.join(", ")) }) }
                        td { (pin_form(&page, &id, &p.tags, false)) }
                    }
                }
            }
        }
        p { "Pin it by hand where a query has these tags (comma-separated; none: everywhere): " (pin_form(&page, &id, &last_tags, true)) }
        h2 { "What was learned" }
        @if let Some(e) = &entry {
            @if e.tags.is_empty() { p.muted { "No verdict yet." } }
            @else {
                table {
                    tr { th { "Tag" } th { "Score" } th { "Relevant" } th { "Irrelevant" } th { "Held back since" } th { "State" } }
                    @for t in &e.tags {
                        tr {
                            td { (t.tag) }
                            td { (format!("{:+.3}", t.score)) }
                            td { (t.positive) }
                            td { (t.negative) }
                            td { (t.held) }
                            td { (if t.trial { "on trial" } else { "" }) }
                        }
                    }
                }
            }
            @if !e.team.is_empty() {
                h3 { "The team's verdicts" }
                table {
                    tr { th { "Repository" } th { "Member" } th { "Verdicts" } th { "Relevant" } th { "Irrelevant" } }
                    @for t in &e.team {
                        tr { td { (t.repo) } td { (t.member) @if t.own { " (you)" } } td { (t.verdicts) } td { (format!("{:.1}", t.relevant)) } td { (format!("{:.1}", t.irrelevant)) } }
                    }
                }
            }
        }
        h3 { "Its record everywhere (seed 001's score), verdict by verdict" }
        (plot::scores(&verdicts, line))
        h2 { "Retire it" }
        p {
            "Takes its lines out of " code { (view.source) } ", keeps the rest of the file byte for byte and a backup beside it. "
            a.retire href={ "/item/" (urlencode(&id)) "/retire" } { "Retire " (id) "…" }
        }
    };
    frame(&format!("{} ({})", id, view.kind), body).into_response()
}

/// A form that pins `id` by hand for `tags` (editable), or unpins it for
/// exactly those.
fn pin_form(page: &Page, id: &str, tags: &[String], pin: bool) -> Markup {
    html! {
        form.inline action="/pin" method="post" {
            input type="hidden" name="id" value=(id);
            input type="hidden" name="pinned" value=(if pin { "yes" } else { "no" });
            input type="hidden" name="form_token" value=(page.running.form_token);
            @if pin {
                input type="text" name="tags" value=(tags.join(",")) aria-label="tags";
            } @else {
                input type="hidden" name="tags" value=(tags.join(","));
            }
            " "
            button type="submit" data-action=(if pin { "pin" } else { "unpin" }) { (if pin { "pin" } else { "unpin" }) }
        }
    }
}

#[derive(Deserialize)]
pub struct PinForm {
    id: String,
    pinned: String,
    #[serde(default)]
    tags: String,
    form_token: String,
}

/// Pins or unpins by hand, as `memctl pin` / `memctl unpin`.
pub async fn pin(State(page): State<Page>, Form(form): Form<PinForm>) -> Response {
    if form.form_token != page.running.form_token {
        return bad_form();
    }
    let tags = tag_list(&form.tags);
    let request = RequestBody::Pin {
        id: form.id.clone(),
        tags,
        pinned: form.pinned == "yes",
    };
    let to = format!("/item/{}", urlencode(&form.id));
    submit(&page, request, &to, "Not changed").await
}

/// The confirmation step before retiring: the exact lines that go.
pub async fn confirm_retire(State(page): State<Page>, Path(id): Path<String>) -> Response {
    let handler = page.handler.clone();
    let target = id.clone();
    let plan =
        tokio::task::spawn_blocking(move || crate::daemon::writer::retire_plan(&handler, &target))
            .await
            .unwrap_or_else(|e| Err(e.to_string()));
    let body = match plan {
        Ok((file, removed)) => html! {
            p { "These lines of " code { (file.display().to_string()) } " go; the rest of the file stays as it is, and a backup is kept beside it:" }
            pre.removed { (removed) }
            form action="/retire" method="post" {
                input type="hidden" name="id" value=(id);
                input type="hidden" name="form_token" value=(page.running.form_token);
                button type="submit" id="confirm-retire" { "Retire " (id) }
                " "
                a href={ "/item/" (urlencode(&id)) } { "Keep it" }
            }
        },
        Err(why) => html! { p.bad { (why) } },
    };
    frame(&format!("Retire {id}?"), body).into_response()
}

#[derive(Deserialize)]
pub struct FeedbackForm {
    id: String,
    relevant: String,
    #[serde(default)]
    tags: String,
    back: String,
    form_token: String,
}

/// A form's comma-separated tags.
fn tag_list(tags: &str) -> Vec<String> {
    tags.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// Where to go after a form: a path of this page's, nothing else.
fn back_to(back: &str) -> String {
    if back.starts_with('/') && !back.starts_with("//") && !back.contains('\\') {
        back.to_string()
    } else {
        "/".to_string()
    }
}

/// Runs a form's request: on to `to` when done, else a page titled
/// `failed` that says why.
async fn submit(page: &Page, request: RequestBody, to: &str, failed: &str) -> Response {
    match reply(ask(page, request).await) {
        Ok(_) => Redirect::to(to).into_response(),
        Err(why) => (
            StatusCode::BAD_REQUEST,
            frame(failed, html! { p.bad { (why) } }),
        )
            .into_response(),
    }
}

fn bad_form() -> Response {
    (
        StatusCode::FORBIDDEN,
        "the form's token does not match this page",
    )
        .into_response()
}

/// Direct feedback (weight 2.0), as `memctl feedback ID --tags ...`.
pub async fn feedback(State(page): State<Page>, Form(form): Form<FeedbackForm>) -> Response {
    if form.form_token != page.running.form_token {
        return bad_form();
    }
    let tags = tag_list(&form.tags);
    let request = RequestBody::Feedback {
        id: form.id.clone(),
        relevant: form.relevant == "yes",
        tags,
        note: Some("from the local page".into()),
    };
    let to = format!(
        "{}?noted={}&relevant={}",
        back_to(&form.back),
        urlencode(&form.id),
        form.relevant == "yes"
    );
    submit(&page, request, &to, "Feedback not recorded").await
}

#[derive(Deserialize)]
pub struct RetireForm {
    id: String,
    form_token: String,
}

/// Retires an item (after the confirmation page).
pub async fn retire(State(page): State<Page>, Form(form): Form<RetireForm>) -> Response {
    if form.form_token != page.running.form_token {
        return bad_form();
    }
    let handler = page.handler.clone();
    let id = form.id.clone();
    let done = tokio::task::spawn_blocking(move || crate::daemon::writer::retire(&handler, &id))
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
    match done {
        Ok(_) => Redirect::to(&format!("/?retired={}", urlencode(&form.id))).into_response(),
        Err(why) => (
            StatusCode::BAD_REQUEST,
            frame("Not retired", html! { p.bad { (why) } }),
        )
            .into_response(),
    }
}

/// What the judge said: each session's evaluation, pending or done.
pub async fn evaluations(State(page): State<Page>) -> Markup {
    let mut audits: Vec<(String, crate::learning::SessionAudit)> = page
        .handler
        .shared
        .sessions()
        .iter()
        .map(|(id, a)| (id.clone(), a.clone()))
        .collect();
    audits.sort_by(|a, b| {
        b.1.updated_at
            .cmp(&a.1.updated_at)
            .then_with(|| a.0.cmp(&b.0))
    });
    let pending = audits
        .iter()
        .filter(|(_, a)| a.ended && !a.processed)
        .count();
    let problems = page
        .handler
        .shared
        .evaluation_problems
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    frame(
        "Evaluations",
        html! {
            p { (pending) " session(s) wait for `memctl evaluate`." }
            table {
                tr { th { "Session" } th { "State" } th { "Judged" } th { "Transcript" } th { "Last change" } th { "Problem" } }
                @for (id, a) in &audits {
                    tr {
                        td { a href={ "/session/" (urlencode(id)) } { (id) } }
                        td { (if a.processed { "evaluated" } else if a.ended { "pending" } else { "open" }) }
                        td { (a.judged) " of " (a.shown.len()) }
                        td { (a.transcript.clone().unwrap_or_else(|| "none recorded (nothing can be judged)".into())) }
                        td { (when(a.updated_at)) }
                        td.bad { (problems.get(id).cloned().unwrap_or_default()) }
                    }
                }
            }
        },
    )
}

/// The knowledge files and their errors, the roots, the hooks, the teams:
/// what `memctl status` knows.
pub async fn status(State(page): State<Page>) -> Response {
    let Ok(Reply::Status(s)) = reply(ask(&page, RequestBody::Status).await) else {
        return not_found("no status".into());
    };
    let s: StatusReport = *s;
    frame(
        "Knowledge & hooks",
        html! {
            p { "memd " (s.daemon_version) ", " (s.files) " files, " (s.items.values().sum::<u64>()) " items; " (s.pending_evaluations) " evaluations pending." }
            h2 { "Roots" }
            table {
                tr { th { "Root" } th { "Scope" } th { "Watched" } }
                @for r in &s.roots { tr { td { (r.path) } td { (r.scope) } td { (if r.exists { r.watch.as_str() } else { "missing" }) } } }
            }
            h2 { "Errors" }
            @if s.errors.is_empty() { p.muted { "None." } }
            @else { ul { @for e in &s.errors { li.bad { code { (e) } } } } }
            @if !s.ignored_files.is_empty() {
                h2 { "Ignored files" }
                ul { @for i in &s.ignored_files { li { (i) } } }
            }
            h2 { "Hooks" }
            @if s.hooks.is_empty() { p.muted { "No hook has called since the daemon started." } }
            @else {
                table {
                    tr { th { "Agent" } th { "Event" } th { "When" } th { "Outcome" } }
                    @for h in &s.hooks { tr { td { (h.harness) } td { (h.event) } td { (when(h.at)) } td { (format!("{:?}", h.outcome)) } } }
                }
            }
            @if !s.teams.is_empty() {
                h2 { "Teams" }
                @for t in &s.teams {
                    p { (t.repo) " shares its verdicts as " (t.name) " (you: " (t.member) ")" }
                    ul { @for f in &t.files { li { (f.file) ": " (f.events) " events" @if f.skipped > 0 { ", " (f.skipped) " lines skipped" } } } }
                }
            }
        },
    )
    .into_response()
}

#[derive(Deserialize)]
pub struct SearchForm {
    #[serde(default)]
    q: String,
}

/// A search over the knowledge, as `memctl search` answers it.
pub async fn search(State(page): State<Page>, UrlQuery(form): UrlQuery<SearchForm>) -> Markup {
    let hits = if form.q.trim().is_empty() {
        Vec::new()
    } else {
        match reply(
            ask(
                &page,
                RequestBody::Search {
                    text: form.q.clone(),
                    limit: 20,
                    query: Query::default(),
                },
            )
            .await,
        ) {
            Ok(Reply::Hits(hits)) => hits,
            _ => Vec::new(),
        }
    };
    frame(
        "Search",
        html! {
            @if hits.is_empty() { p.muted { "Nothing found." } }
            @else {
                table {
                    tr { th { "Item" } th { "Kind" } th { "Similarity" } th { "Title" } th { "Source" } }
                    @for h in &hits { tr { td { (item_link(&h.id)) } td { (h.kind.to_string()) } td { (format!("{:.3}", h.similarity)) } td { (h.title) } td { (h.source) } } }
                }
            }
        },
    )
}

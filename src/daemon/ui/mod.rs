//! The local page (`memctl ui`): what memd injected, why, and what it
//! learned, with feedback and retiring an item. Served by the daemon on
//! the tokio it already runs, on the loopback interface only, at a port
//! chosen per user ([`port_for`]), started on the first `memctl ui`.
//!
//! Who may use it: the first address carries a random token
//! (`/?token=...`); the answer sets it as a cookie (`HttpOnly`,
//! `SameSite=Strict`) and sends the browser on without it. Every request
//! needs the cookie or the token, and a `Host` of the page's own (no DNS
//! rebinding); every change is a POST that also carries a second random
//! token from the page's form and, where the browser says, comes from the
//! page itself (`Origin`, `Sec-Fetch-Site`). Over TCP the peer's user
//! cannot be checked, so the token is what keeps another user of the
//! machine out. Nothing is fetched from elsewhere: no script at all, a
//! style sheet of the page's own, a Content-Security-Policy that allows
//! nothing else, and no referrer leaves it.
//!
//! - [`pages`]: the pages, as HTML built by `maud` (escaping every text).
//! - [`plot`]: an item's score over its verdicts, as SVG.

mod pages;
mod plot;

use std::net::{Ipv4Addr, SocketAddr};

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;

use super::handler::Handler;

/// The page once started.
#[derive(Debug, Clone)]
pub struct Running {
    pub addr: SocketAddr,
    /// In the first address, then the cookie.
    pub token: String,
    /// In every form.
    pub form_token: String,
}

impl Running {
    /// The address to open first: the token in it.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token)
    }
}

/// The cookie that carries the token.
const COOKIE: &str = "memd_ui";

/// The port tried first for this user: the same every time, and another
/// user's another (a free one is taken when it is in use).
pub fn port_for(uid: u32) -> u16 {
    41_000 + (uid % 4_000) as u16
}

fn random_token() -> String {
    format!(
        "{:016x}{:016x}",
        crate::safe_file::random_u64(),
        crate::safe_file::random_u64().rotate_left(17) ^ u64::from(std::process::id())
    )
}

/// Starts the page on the running tokio (or finds it started); returns it.
pub fn start(handler: &Handler) -> std::io::Result<Running> {
    let mut ui = handler.shared.ui.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(running) = ui.as_ref() {
        return Ok(running.clone());
    }
    let preferred = SocketAddr::from((Ipv4Addr::LOCALHOST, port_for(crate::safe_file::own_uid())));
    let listener = std::net::TcpListener::bind(preferred)
        .or_else(|_| std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))?;
    listener.set_nonblocking(true)?;
    let running = Running {
        addr: listener.local_addr()?,
        token: random_token(),
        form_token: random_token(),
    };
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|e| std::io::Error::other(format!("no runtime to serve the page on: {e}")))?;
    let state = Page {
        handler: handler.clone(),
        running: running.clone(),
    };
    let app = router(state);
    runtime.spawn(async move {
        match tokio::net::TcpListener::from_std(listener) {
            Ok(listener) => {
                if let Err(err) = axum::serve(listener, app).await {
                    tracing::warn!("the local page stopped: {err}");
                }
            }
            Err(err) => tracing::warn!("the local page cannot listen: {err}"),
        }
    });
    tracing::info!("the local page is on http://{}", running.addr);
    *ui = Some(running.clone());
    Ok(running)
}

/// What every page's handler has.
#[derive(Clone)]
pub(crate) struct Page {
    pub(crate) handler: Handler,
    pub(crate) running: Running,
}

fn router(state: Page) -> Router {
    Router::new()
        .route("/", get(pages::sessions))
        .route("/session/{id}", get(pages::session))
        .route("/item/{id}", get(pages::item))
        .route("/item/{id}/retire", get(pages::confirm_retire))
        .route("/evaluations", get(pages::evaluations))
        .route("/status", get(pages::status))
        .route("/search", get(pages::search))
        .route("/style.css", get(pages::style))
        .route("/feedback", post(pages::feedback))
        .route("/retire", post(pages::retire))
        .route("/pin", post(pages::pin))
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

fn forbidden(why: &str) -> Response {
    let mut response = (StatusCode::FORBIDDEN, why.to_string()).into_response();
    secure(response.headers_mut());
    response
}

/// The headers every answer carries: nothing from elsewhere, no framing,
/// no caching, no referrer.
fn secure(headers: &mut HeaderMap) {
    let set = |headers: &mut HeaderMap, name, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set(
        headers,
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    // `same-origin`, not `no-referrer`: with the latter a browser sends
    // `Origin: null` on the page's own forms.
    set(headers, header::REFERRER_POLICY, "same-origin");
    set(headers, header::CACHE_CONTROL, "no-store");
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
}

fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_string())
}

fn query_token(uri: &axum::http::Uri) -> Option<String> {
    uri.query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token=").map(str::to_string))
}

/// Who may use the page ([module docs](self)).
async fn guard(State(page): State<Page>, request: Request, next: Next) -> Response {
    let running = &page.running;
    let port = running.addr.port();
    let host_ok = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| h == format!("127.0.0.1:{port}") || h == format!("localhost:{port}"));
    if !host_ok {
        return forbidden("this page answers only at its own address");
    }
    let by_cookie = cookie_token(request.headers()).as_deref() == Some(running.token.as_str());
    let by_query = query_token(request.uri()).as_deref() == Some(running.token.as_str());
    if !by_cookie && !by_query {
        return forbidden("open the address `memctl ui` prints: this page needs its token");
    }
    if request.method() == Method::POST {
        let origin_ok = request
            .headers()
            .get(header::ORIGIN)
            .and_then(|o| o.to_str().ok())
            .is_none_or(|o| {
                o == format!("http://127.0.0.1:{port}") || o == format!("http://localhost:{port}")
            });
        let site_ok = request
            .headers()
            .get("sec-fetch-site")
            .and_then(|o| o.to_str().ok())
            .is_none_or(|s| s == "same-origin" || s == "none");
        if !origin_ok || !site_ok {
            return forbidden("a change to memd comes only from its own page");
        }
    } else if by_query && !by_cookie {
        // The first address: the token becomes a cookie, and leaves the
        // address bar (and the history).
        // To a path of the page's own (`//host` would be another site).
        let path = request.uri().path();
        let path = if path.starts_with("//") { "/" } else { path };
        let mut response = Redirect::to(path).into_response();
        let cookie = format!(
            "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
            running.token
        );
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, value);
        }
        secure(response.headers_mut());
        return response;
    }
    let mut response = next.run(request).await;
    secure(response.headers_mut());
    response
}

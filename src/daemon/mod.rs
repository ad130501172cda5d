//! `memd serve`: the per-user daemon. Start-up takes the lock, loads the
//! index from the store (re-parsing only files that changed), starts the
//! indexer thread that watches the roots, and serves the socket until
//! SIGTERM or SIGINT; then in-flight requests finish and the socket is
//! removed.
//!
//! - [`activation`]: the socket systemd or launchd hands over.
//! - [`server`]: connections, frames, limits.
//! - [`handler`]: answering each request.
//! - [`watch`]: the indexer thread and the file watchers.
//! - [`indexer`]: bringing memory and store in line with the disk.
//! - [`recorder`]: what queries showed, recorded in batches once their
//!   replies are written.
//! - [`learning`]: feedback, evaluations, the log.
//! - [`team`]: the team's verdicts in a project's `.memd/learned/`:
//!   followed as they change, and one's own appended.
//! - [`writer`]: adding an item to a knowledge file, and retiring one.
//! - [`injections`]: the latest answers to sessions, for the page.
//! - [`ui`]: the local page (`memctl ui`).
//! - [`state`]: what they share.

pub mod activation;
pub mod handler;
pub mod indexer;
pub mod injections;
pub mod learning;
pub mod recorder;
pub mod server;
pub mod state;
pub mod team;
pub mod ui;
pub mod watch;
pub mod writer;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::engine::Engine;
use crate::store::{Store, StoreError};

use self::handler::Handler;
use self::indexer::Pass;
use self::state::{Info, Knowledge, Latencies, Shared};

/// Why the daemon could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// Another daemon holds the lock for this socket.
    #[error("another memd is already running on {socket}{}", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    AlreadyRunning { socket: PathBuf, pid: Option<u32> },
    /// The data directory's database is in use by another daemon.
    #[error("the database {0} is in use by another memd")]
    DatabaseInUse(PathBuf),
    /// A file-system step failed.
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// The service manager handed over an unusable socket.
    #[error(transparent)]
    Activation(#[from] activation::ActivationError),
    /// The socket's directory could be used by another user.
    #[error("refusing the socket directory {}: {why}; {fix}", dir.display())]
    UnsafeSocketDir {
        dir: PathBuf,
        why: String,
        fix: String,
    },
    /// The socket path does not fit in a socket address.
    #[error("the socket path {} is {len} bytes; Unix sockets allow at most {MAX_SOCKET_PATH}: choose a shorter one with --socket or MEMD_SOCKET", path.display())]
    SocketPathTooLong { path: PathBuf, len: usize },
}

/// The longest socket path the platforms accept (macOS's `sun_path` is 104
/// bytes with its terminating NUL; Linux's 108).
pub const MAX_SOCKET_PATH: usize = 103;

fn io<'p>(what: &'static str, path: &'p Path) -> impl FnOnce(std::io::Error) -> DaemonError + 'p {
    move |source| DaemonError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// What `memd serve` needs.
pub struct ServeOptions {
    pub config: Config,
    pub socket: PathBuf,
}

/// Makes sure the socket's directory exists and is private: a directory
/// memd creates is 0700, and one that is already there must be ours and
/// closed to group and others, as tmux and ssh-agent require (in a shared
/// `/tmp`, another user could otherwise have made it, and answer our hooks).
fn prepare_socket_dir(socket: &Path) -> Result<(), DaemonError> {
    let Some(dir) = socket.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    if std::fs::symlink_metadata(dir).is_err() {
        std::fs::create_dir_all(dir).map_err(io("cannot create the socket directory", dir))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io("cannot make the socket directory private", dir))?;
    }
    check_private_dir(dir, own_uid())
}

pub use crate::safe_file::own_uid;

/// Refuses a directory (or a symlink to one) that is not owned by `uid` or
/// that group or others may use.
fn check_private_dir(dir: &Path, uid: u32) -> Result<(), DaemonError> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |why: String, fix: String| {
        Err(DaemonError::UnsafeSocketDir {
            dir: dir.to_path_buf(),
            why,
            fix,
        })
    };
    let elsewhere = "or choose a socket in a private directory with --socket or MEMD_SOCKET";
    let link = std::fs::symlink_metadata(dir).map_err(io("cannot inspect", dir))?;
    if link.file_type().is_symlink() && link.uid() != uid {
        return refuse(
            format!(
                "it is a symlink owned by uid {}, not by you (uid {uid})",
                link.uid()
            ),
            format!("remove it, {elsewhere}"),
        );
    }
    let meta = std::fs::metadata(dir).map_err(io("cannot inspect", dir))?;
    if !meta.is_dir() {
        return refuse(
            "it is not a directory".into(),
            format!("remove it, {elsewhere}"),
        );
    }
    if meta.uid() != uid {
        return refuse(
            format!("it is owned by uid {}, not by you (uid {uid})", meta.uid()),
            format!("have it removed, {elsewhere}"),
        );
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return refuse(
            format!("group or others have access to it (mode {mode:04o})"),
            format!("run `chmod 700 {}`, {elsewhere}", dir.display()),
        );
    }
    Ok(())
}

/// Creates the data directory private to the user (0700); one that is
/// there must be the user's (a link the user configured may lead to it).
fn prepare_data_dir(dir: &Path) -> Result<(), DaemonError> {
    crate::safe_file::own_dir(dir, 0o700, true)
        .map_err(|e| io("cannot use the data directory", dir)(std::io::Error::other(e.to_string())))
}

/// Creates memd's own knowledge directory (`<data dir>/knowledge`, a
/// default root) private to the user when it is a root and absent, so a
/// new setup has no missing root and what is written there later is
/// watched from the start. Any other root is the user's to create. A
/// failure is logged: the root is then reported missing, as before.
fn prepare_own_root(config: &Config) {
    let own = config.data_dir.join("knowledge");
    let absent =
        std::fs::symlink_metadata(&own).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    if absent && config.roots.contains(&own) {
        if let Err(err) = crate::safe_file::own_dir(&own, 0o700, false) {
            tracing::warn!("cannot create memd's knowledge directory: {err}");
        }
    }
}

/// Says loudly what opening the store had to do.
fn report_store(report: &crate::store::OpenReport) {
    if let Some(why) = &report.rebuilt {
        tracing::error!("the database was rebuilt from the knowledge files: {why}");
    }
    if let Some(aside) = &report.set_aside {
        tracing::error!(
            "the unusable database is kept as {} ({} learned records that verify were carried over; the rest is lost: `memctl export` keeps a copy of what is learned)",
            aside.display(),
            report.salvaged
        );
    }
    if report.unverified > 0 {
        tracing::warn!(
            "{} stored records failed their checksum and were dropped (files are re-parsed)",
            report.unverified
        );
    }
}

/// Takes the per-socket lock before the socket is touched, and writes our
/// pid into it.
fn take_lock(socket: &Path) -> Result<File, DaemonError> {
    let mut name = socket.as_os_str().to_owned();
    name.push(".lock");
    let path = PathBuf::from(name);
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(io("cannot open the lock file", &path))?;
    if file.try_lock().is_err() {
        let pid = std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse().ok());
        return Err(DaemonError::AlreadyRunning {
            socket: socket.to_path_buf(),
            pid,
        });
    }
    file.set_len(0)
        .map_err(io("cannot write the lock file", &path))?;
    writeln!(file, "{}", std::process::id()).map_err(io("cannot write the lock file", &path))?;
    Ok(file)
}

/// Loads the knowledge: the store first, then a rescan for what changed.
fn start_up(config: &Config, store: &Store) -> Knowledge {
    let mut engine = Engine::new(config);
    match config.semantic_model() {
        Ok(model) => {
            if let Some(model) = &model {
                tracing::info!(
                    "semantic tier: model {} ({} dimensions)",
                    model.name(),
                    model.dims()
                );
            }
            engine.set_model(model);
        }
        Err(err) => {
            tracing::error!("the semantic model cannot be loaded, matching is lexical only: {err}")
        }
    }
    let mut k = Knowledge {
        engine,
        follow_symlinks_out_of_roots: config.daemon.follow_symlinks_out_of_roots,
        ..Knowledge::default()
    };
    let mut projects = store.projects().unwrap_or_else(|err| {
        tracing::warn!("cannot read the registered projects: {err}");
        Vec::new()
    });
    // A project registered before may have changed hands since.
    projects.retain(
        |repo| match crate::knowledge::trust::distrust_project(repo) {
            None => true,
            Some(why) => {
                tracing::warn!("not loading the project {}: {why}", repo.display());
                k.refused_projects.insert(repo.clone(), why);
                false
            }
        },
    );
    for (path, project) in indexer::roots_for(&config.roots, &projects) {
        k.add_root(path, project);
    }
    let mut pass = Pass::new();
    indexer::load_from_store(&mut k, store, &mut pass);
    indexer::rescan(&mut k, &mut pass, false);
    k.startup = pass.finish(store);
    k.engine.shrink_to_fit();
    k
}

/// Runs the daemon until SIGTERM or SIGINT.
pub fn run(options: ServeOptions) -> Result<(), DaemonError> {
    let ServeOptions { config, socket } = options;
    map_large_allocations();
    // Socket activation: the service manager owns the socket; memd serves
    // on it and leaves it in place at exit.
    let inherited = activation::inherited_listener()?;
    let socket = inherited.as_ref().map_or(socket, |(_, path)| path.clone());
    if inherited.is_none() {
        let len = socket.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(DaemonError::SocketPathTooLong { path: socket, len });
        }
        prepare_socket_dir(&socket)?;
    }
    let lock = take_lock(&socket)?;
    if inherited.is_none() && socket.exists() {
        tracing::info!("removing the stale socket {}", socket.display());
        std::fs::remove_file(&socket).map_err(io("cannot remove the stale socket", &socket))?;
    }
    prepare_data_dir(&config.data_dir)?;
    prepare_own_root(&config);
    let db_path = config.data_dir.join("memd.redb");
    let (store, report) = match Store::open(&db_path) {
        Ok(opened) => opened,
        Err(StoreError::Db(redb::Error::DatabaseAlreadyOpen)) => {
            return Err(DaemonError::DatabaseInUse(db_path))
        }
        Err(err) => return Err(err.into()),
    };
    report_store(&report);
    let store = Arc::new(store);
    let started = Instant::now();
    let knowledge = start_up(&config, &store);
    let learned = store.learned().unwrap_or_else(|err| {
        tracing::warn!("cannot read learned state: {err}");
        Default::default()
    });
    let sessions: HashMap<_, _> = store
        .sessions()
        .unwrap_or_else(|err| {
            tracing::warn!("cannot read session audits: {err}");
            Vec::new()
        })
        .into_iter()
        .collect();
    release_freed_memory();
    tracing::info!(
        "loaded {} files ({} from the store, {} parsed) in {:.1} ms",
        knowledge.files.len(),
        knowledge.startup.from_store,
        knowledge.startup.parsed,
        started.elapsed().as_secs_f64() * 1000.0
    );
    let shared = Arc::new(Shared {
        knowledge: RwLock::new(knowledge),
        learned: RwLock::new(learned),
        writer: Mutex::new(()),
        sessions: Mutex::new(sessions),
        last_shown: Mutex::new(HashMap::new()),
        latencies: Mutex::new(Latencies::default()),
        places: Mutex::new(HashMap::new()),
        hooks: Mutex::new(state::HookActivity::default()),
        injections: Mutex::new(Default::default()),
        evaluation_problems: Mutex::new(HashMap::new()),
        ui: Mutex::new(None),
        info: Info {
            started,
            pid: std::process::id(),
            config: config.path.clone(),
            data_dir: config.data_dir.clone(),
            socket: socket.clone(),
            member: config.team.member.clone(),
        },
    });
    team::sync_all(&shared);
    let (indexer_tx, indexer_thread) = watch::spawn(shared.clone(), store.clone());
    let retention = recorder::Retention {
        max_age_secs: i64::from(config.daemon.session_days.max(1)) * 86_400,
        max_sessions: config.daemon.max_sessions.max(1),
    };
    let (recorder, recorder_thread) = recorder::spawn(shared.clone(), store.clone(), retention);
    let judge = if config.evaluator.command.is_empty() {
        crate::evaluate::Judge::Builtin
    } else {
        crate::evaluate::Judge::Command {
            argv: config.evaluator.command.clone(),
            timeout: Duration::from_millis(config.evaluator.timeout_ms.max(1)),
        }
    };
    let handler = Handler {
        shared,
        store: store.clone(),
        indexer: indexer_tx.clone(),
        recorder: recorder.clone(),
        judge: Arc::new(judge),
    };
    let limits = server::Limits {
        max_connections: config.daemon.max_connections.max(1),
        read_timeout: Duration::from_millis(config.daemon.read_timeout_ms.max(1)),
        write_timeout: Duration::from_millis(config.daemon.write_timeout_ms.max(1)),
        max_frame: config.daemon.max_frame_bytes,
        shutdown_grace: Duration::from_secs(5),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("cannot start the runtime for", &socket))?;
    let activated = inherited.is_some();
    let served = runtime.block_on(async {
        let listener = match inherited {
            Some((listener, _)) => {
                listener
                    .set_nonblocking(true)
                    .map_err(io("cannot use the inherited socket", &socket))?;
                tokio::net::UnixListener::from_std(listener)
                    .map_err(io("cannot use the inherited socket", &socket))?
            }
            None => {
                let listener = tokio::net::UnixListener::bind(&socket)
                    .map_err(io("cannot listen on", &socket))?;
                std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
                    .map_err(io("cannot restrict the socket", &socket))?;
                listener
            }
        };
        let uid = own_uid();
        tracing::info!(
            "memd {} listening on {}{}",
            env!("CARGO_PKG_VERSION"),
            socket.display(),
            if activated {
                " (socket activation)"
            } else {
                ""
            }
        );
        // The index is loaded and the socket answers: tell systemd, and keep
        // its watchdog fed.
        let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
        if let Some(interval) = sd_notify::watchdog_enabled() {
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(interval / 2);
                loop {
                    tick.tick().await;
                    let _ = sd_notify::notify(&[sd_notify::NotifyState::Watchdog]);
                }
            });
        }
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            wait_for_signal().await;
            tracing::info!("shutting down");
            let _ = stop_tx.send(true);
        });
        server::serve(listener, handler, limits, uid, stop_rx).await;
        Ok::<(), DaemonError>(())
    });
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
    let _ = indexer_tx.send(watch::Message::Shutdown);
    recorder.stop();
    let _ = recorder_thread.join();
    let _ = indexer_thread.join();
    if !activated {
        let _ = std::fs::remove_file(&socket);
    }
    drop(lock);
    served
}

/// Hands freed memory back to the system (glibc keeps it in its arenas
/// otherwise): after the start-up's transient allocations, and after a
/// large request.
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim only returns free heap pages to the kernel;
        // it takes no pointers and is safe to call at any time.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Makes glibc serve large allocations (a request's frame, a long task and
/// what is derived from it) from their own mappings, returned to the
/// system when freed, instead of raising its threshold after the first
/// ones and keeping them in its arenas.
fn map_large_allocations() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        /// glibc's `M_MMAP_THRESHOLD`.
        const M_MMAP_THRESHOLD: i32 = -3;
        // SAFETY: mallopt only changes the allocator's tuning; it takes no
        // pointers.
        unsafe {
            libc::mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
        }
    }
}

async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_private_directory_of_ours_holds_the_socket() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        std::fs::create_dir(&dir).unwrap();
        let set =
            |mode| std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        set(0o700);
        assert!(check_private_dir(&dir, own_uid()).is_ok());
        for mode in [0o777, 0o755, 0o710, 0o701] {
            set(mode);
            let err = check_private_dir(&dir, own_uid()).unwrap_err().to_string();
            assert!(err.contains("chmod 700"), "{mode:o}: {err}");
        }
        set(0o700);
        let err = check_private_dir(&dir, own_uid() + 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not by you"), "{err}");
        let file = tmp.path().join("file");
        std::fs::write(&file, "").unwrap();
        let err = check_private_dir(&file, own_uid()).unwrap_err().to_string();
        assert!(err.contains("not a directory"), "{err}");
    }
}

//! The team's files in the daemon ([`crate::learning::team`]): each
//! project's `.memd/learned/` read at registration, at start-up and on
//! every change the watcher sees (a `git pull` included), only what was
//! appended when a file only grew; and this engineer's verdicts made in a
//! project that shares them appended to their own file, through the safe
//! write path.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::learning::team::{
    self, member_file_name, Event, MemberFile, Team, TeamFile, LEARNED_DIR, TEAM_FILE,
};
use crate::safe_file::{self, SafeFileError};

use super::state::Shared;

/// The project a path of its team's files belongs to: `<repo>` for
/// `<repo>/.memd/team.toml` and anything under `<repo>/.memd/learned`.
pub fn team_repo_of(path: &Path) -> Option<PathBuf> {
    path.ancestors().find_map(|dir| {
        let memd = dir.parent()?;
        let named = |p: &Path, name: &str| p.file_name().is_some_and(|n| n == name);
        let under_learned = named(dir, LEARNED_DIR) && named(memd, ".memd");
        let team_file = dir == path && named(dir, TEAM_FILE) && named(memd, ".memd");
        (under_learned || team_file).then(|| memd.parent().map(Path::to_path_buf))?
    })
}

/// This engineer's member name in `repo`: `[team] member` in memd's
/// configuration, else git's `user.email` there, else the login name.
fn member_in(configured: Option<&str>, repo: &Path) -> String {
    if let Some(member) = configured.filter(|m| !m.trim().is_empty()) {
        return member.trim().to_string();
    }
    let git = Command::new("git")
        .args(["config", "user.email"])
        .current_dir(repo)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    if let Ok(out) = git {
        let email = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if out.status.success() && !email.is_empty() {
            return email;
        }
    }
    std::env::var("USER").unwrap_or_else(|_| "member".into())
}

/// Reads a member's file on from where it was read (again from the start
/// when it changed otherwise than by growing). Opened without following a
/// link and without blocking; only a regular file nobody else may write.
fn read_member(path: &Path, file: &mut MemberFile, repo: &str) -> Result<(), String> {
    let mut f = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| format!("cannot open: {e}"))?;
    let meta = f.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!(
            "not a regular file (a {}); not read",
            safe_file::type_name(&meta)
        ));
    }
    if let Some(why) = crate::knowledge::trust::distrust(&meta) {
        return Err(format!("{why}; not read"));
    }
    if meta.len() > team::MAX_FILE_BYTES {
        return Err(format!(
            "{} bytes, over the {} MiB limit; not read",
            meta.len(),
            team::MAX_FILE_BYTES / (1024 * 1024)
        ));
    }
    let now = crate::time::now();
    let mut read_from = |from: u64| -> Result<Vec<u8>, String> {
        f.seek(SeekFrom::Start(from)).map_err(|e| e.to_string())?;
        let mut bytes = Vec::new();
        (&mut f)
            .take(team::MAX_FILE_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| e.to_string())?;
        Ok(bytes)
    };
    let from = file.resume_at();
    if from <= meta.len() {
        let bytes = read_from(from)?;
        if file.read(from, &bytes, repo, now) {
            return Ok(());
        }
    }
    let bytes = read_from(0)?;
    file.read(0, &bytes, repo, now);
    Ok(())
}

/// Reads `repo`'s team as it is on disk now, going on from `before` (what
/// was read of it before: a file that only grew is read from where reading
/// stopped); `member`: `[team] member`. `None`: the project does not share.
pub fn load(repo: &Path, before: Option<Team>, member: Option<&str>) -> Option<Team> {
    let memd = repo.join(".memd");
    let settings = match crate::knowledge::read::read_regular(&memd.join(TEAM_FILE)) {
        Err(crate::knowledge::read::ReadError::Io(e))
            if e.kind() == std::io::ErrorKind::NotFound =>
        {
            return None
        }
        Err(e) => Err(format!("{}: {e}", memd.join(TEAM_FILE).display())),
        Ok(read) => std::str::from_utf8(&read.bytes)
            .map_err(|_| "not UTF-8".to_string())
            .and_then(|text| toml::from_str::<TeamFile>(text).map_err(|e| e.to_string()))
            .map_err(|e| format!("{}: {e}", memd.join(TEAM_FILE).display())),
    };
    let mut team = before.unwrap_or_default();
    let settings = match settings {
        Ok(file) => file.team,
        Err(why) => {
            return Some(Team::broken(why));
        }
    };
    if team.name != settings.name {
        team.files.clear();
    }
    team.name = settings.name;
    team.teammate_weight = settings.teammate_weight.clamp(0.0, 1.0);
    team.error = None;
    if team.member.is_empty() {
        // As its file names it: what its events say it is.
        team.member = member_file_name(&member_in(member, repo))
            .trim_end_matches(".jsonl")
            .to_string();
    }
    let dir = memd.join(LEARNED_DIR);
    let mut present = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if crate::knowledge::scan::is_temporary_name(&path) || !name.ends_with(".jsonl") {
                continue;
            }
            let stem = name.trim_end_matches(".jsonl").to_string();
            let file = team
                .files
                .entry(name.clone())
                .or_insert_with(|| MemberFile::new(&stem));
            if let Err(why) = read_member(&path, file, &team.name) {
                file.refuse(why);
            }
            present.push(name);
        }
    }
    team.files.retain(|name, _| present.contains(name));
    team.refresh();
    Some(team)
}

/// Reads `repo`'s team again (or forgets it, when it no longer shares).
pub fn sync(shared: &Shared, repo: &Path) {
    let before = shared.learned().teams.get(repo).cloned();
    let had = before.is_some();
    let after = load(repo, before, shared.info.member.as_deref());
    let mut learned = shared.learned_mut();
    match after {
        Some(team) => {
            if !had {
                tracing::info!(
                    "{} shares its verdicts with its team ({} events from {} members)",
                    repo.display(),
                    team.events(),
                    team.files.len()
                );
            }
            learned.teams.insert(repo.to_path_buf(), team);
        }
        None => {
            learned.teams.remove(repo);
        }
    }
}

/// Reads the team of every registered project again.
pub fn sync_all(shared: &Shared) {
    let projects: Vec<PathBuf> = shared.read().engine.projects().to_vec();
    for repo in projects {
        sync(shared, &repo);
    }
}

/// The team's name and this engineer's member name in `repo`, when it
/// shares its verdicts and its settings could be read.
fn sharing(shared: &Shared, repo: &Path) -> Option<(String, String)> {
    shared
        .learned()
        .teams
        .get(repo)
        .filter(|t| t.error.is_none())
        .map(|t| (t.name.clone(), t.member.clone()))
}

/// Appends this engineer's verdicts on `items` (item, verdict), made in
/// the context of `tags` at `place` with `weight`, to their file in the
/// team's `learned/`, if the repository there shares its verdicts.
pub fn record(shared: &Shared, place: &str, tags: &[String], items: &[(String, f64)], weight: f64) {
    let items: Vec<(String, f64)> = items
        .iter()
        .filter(|(_, v)| *v != 0.0 && v.is_finite())
        .cloned()
        .collect();
    if items.is_empty() {
        return;
    }
    let Some(repo) = super::handler::repository_of(Path::new(place)) else {
        return;
    };
    let Some((name, member)) = sharing(shared, &repo) else {
        return;
    };
    match append(&repo, &name, &member, tags, &items, weight) {
        Ok(path) => {
            tracing::info!(
                "{} verdict(s) shared with the team in {}",
                items.len(),
                path.display()
            );
            sync(shared, &repo);
        }
        Err(err) => tracing::warn!("could not share verdicts with the team: {err}"),
    }
}

fn append(
    repo: &Path,
    name: &str,
    member: &str,
    tags: &[String],
    items: &[(String, f64)],
    weight: f64,
) -> Result<PathBuf, SafeFileError> {
    if crate::knowledge::trust::distrust_project(repo).is_some() {
        return Err(SafeFileError::Io {
            what: "the project is not trusted",
            path: repo.to_path_buf(),
            source: std::io::Error::other("not written"),
        });
    }
    let dir = repo.join(".memd").join(LEARNED_DIR);
    safe_file::own_dir(&dir, 0o755, false)?;
    let path = dir.join(member_file_name(member));
    let how = safe_file::Replace {
        carry_appends: true,
        ..safe_file::Replace::default()
    };
    let mut tags: Vec<String> = tags.to_vec();
    tags.sort();
    tags.dedup();
    safe_file::update(&path, &how, |current| {
        let mut bytes = current.map(|c| c.bytes.clone()).unwrap_or_default();
        // The last event id written, to write the next after it.
        let mut last = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| {
                t.lines()
                    .rev()
                    .find_map(|l| serde_json::from_str::<Event>(l).ok())
            })
            .map(|e| e.event);
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        let now = crate::time::now();
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        for (item, verdict) in items {
            let id = team::next_id(last.as_deref(), now_ms, safe_file::random_u64());
            let event = Event {
                event: id.clone(),
                member: member.to_string(),
                item: item.clone(),
                repo: name.to_string(),
                tags: tags.clone(),
                verdict: verdict.clamp(-1.0, 1.0),
                weight,
                time: now,
            };
            let line = serde_json::to_string(&event).map_err(|e| SafeFileError::Io {
                what: "cannot encode an event",
                path: path.clone(),
                source: std::io::Error::other(e),
            })?;
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
            last = Some(id);
        }
        Ok::<_, SafeFileError>(Some(bytes))
    })?;
    Ok(path)
}

/// What `memctl status` shows of each team.
pub fn status(shared: &Shared, engine: &crate::engine::Engine) -> Vec<crate::protocol::TeamStatus> {
    use crate::protocol::{TeamFileStatus, TeamStatus};
    let learned = shared.learned();
    learned
        .teams
        .iter()
        .map(|(repo, team)| {
            let dir = repo.join(".memd").join(LEARNED_DIR);
            let known = |id: &str| engine.get_anywhere(id).is_some();
            let mut unknown: Vec<String> = team.items().filter(|i| !known(i)).cloned().collect();
            unknown.sort();
            unknown.dedup();
            TeamStatus {
                repo: repo.display().to_string(),
                name: team.name.clone(),
                member: team.member.clone(),
                member_file: dir
                    .join(member_file_name(&team.member))
                    .display()
                    .to_string(),
                teammate_weight: team.teammate_weight,
                error: team.error.clone(),
                files: team
                    .files
                    .iter()
                    .map(|(name, f)| {
                        let path = dir.join(name);
                        TeamFileStatus {
                            file: path.display().to_string(),
                            member: f.member.clone(),
                            events: f.events,
                            items: f.tallies.len() as u64,
                            skipped: f.skipped,
                            problems: f
                                .problems
                                .iter()
                                .map(|p| format!("{}:{}: {}", path.display(), p.line, p.what))
                                .collect(),
                        }
                    })
                    .collect(),
                unknown_items: unknown,
            }
        })
        .collect()
}

/// Why a compaction did not happen.
#[derive(Debug, thiserror::Error)]
enum CompactError {
    #[error(transparent)]
    File(#[from] SafeFileError),
    #[error("{0}")]
    Refused(String),
}

/// `memctl team compact`: one's own file in the team's `learned/` of the
/// repository at `place` replaced by one snapshot line of one's evidence
/// (what the file's events add up to), through the safe write path, with
/// a backup; nobody else's file is touched.
pub fn compact(shared: &Shared, place: &str) -> crate::protocol::Response {
    use crate::protocol::{ErrorKind, Reply, Response};
    let Some(repo) = super::handler::repository_of(Path::new(place)) else {
        return Response::error(
            ErrorKind::BadRequest,
            format!("{place} is not inside a repository"),
        );
    };
    let Some((name, member)) = sharing(shared, &repo) else {
        return Response::error(
            ErrorKind::BadRequest,
            format!(
                "{} does not share its verdicts (no readable .memd/team.toml, or memd has not seen the repository yet)",
                repo.display()
            ),
        );
    };
    let path = repo
        .join(".memd")
        .join(LEARNED_DIR)
        .join(member_file_name(&member));
    let (mut lines, mut items) = (0, 0);
    // What the events add up to, which the snapshot must read back as.
    let expected = std::rc::Rc::new(std::cell::RefCell::new(None));
    let (check_member, check_name, check_expected) =
        (member.clone(), name.clone(), expected.clone());
    let check = move |bytes: &[u8]| -> Result<(), String> {
        let mut file = MemberFile::new(&check_member);
        file.read(0, bytes, &check_name, crate::time::now());
        let same = file.skipped == 0 && Some(&file.tallies) == check_expected.borrow().as_ref();
        same.then_some(())
            .ok_or_else(|| "the snapshot does not read back as the events it replaces".to_string())
    };
    let how = safe_file::Replace {
        back_up: true,
        check: Some(&check),
        ..safe_file::Replace::default()
    };
    let updated = safe_file::update(&path, &how, |current| {
        let Some(current) = current else {
            return Err(CompactError::Refused(format!(
                "{} does not exist: nothing to compact",
                path.display()
            )));
        };
        let mut file = MemberFile::new(&member);
        file.read(0, &current.bytes, &name, crate::time::now());
        if file.skipped > 0 {
            return Err(CompactError::Refused(format!(
                "{} has {} line(s) memd skips (see memctl status): fix them first, nothing was changed",
                path.display(),
                file.skipped
            )));
        }
        lines = file.lines;
        items = file.tallies.len() as u64;
        *expected.borrow_mut() = Some(file.tallies.clone());
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let snapshot = team::Snapshot::of(&file, &name, now_ms, safe_file::random_u64());
        let mut text = serde_json::to_string(&snapshot)
            .map_err(|e| CompactError::Refused(format!("cannot encode the snapshot: {e}")))?;
        text.push('\n');
        Ok(Some(text.into_bytes()))
    });
    match updated {
        Ok(updated) => {
            sync(shared, &repo);
            Response::ok(Reply::TeamCompacted {
                file: path.display().to_string(),
                lines,
                items,
                backup: updated.replaced.backup.map(|b| b.display().to_string()),
            })
        }
        Err(CompactError::Refused(why)) => Response::error(ErrorKind::BadRequest, why),
        Err(err) => Response::error(ErrorKind::Internal, err.to_string()),
    }
}

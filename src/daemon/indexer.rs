//! Bringing the in-memory knowledge and the store in line with the files on
//! disk. Every event is only a hint that "this path may have changed": the
//! path's current state decides, by size and modification time, then by
//! content hash, so any way of saving (in place, temp file and rename, vim's
//! backup dance, `sed -i`) ends in the same place.

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, UNIX_EPOCH};

use crate::knowledge::file::unreadable_because;
use crate::knowledge::read::{read_regular, read_under_root, ReadError};
use crate::knowledge::scan::{is_knowledge_path, knowledge_files};
use crate::knowledge::{parse_file, FileKind, FileLoad};
use crate::protocol::ReindexReport;
use crate::store::{FileRecord, FileVectors, Store};

use super::state::{FileMeta, Knowledge};

/// Counts of one pass.
#[derive(Default)]
pub struct Pass {
    started: Option<Instant>,
    parsed: u64,
    from_store: u64,
    removed: u64,
    put: Vec<(PathBuf, FileRecord, Option<FileVectors>)>,
    remove: Vec<PathBuf>,
}

impl Pass {
    /// A pass starting now.
    pub fn new() -> Pass {
        Pass {
            started: Some(Instant::now()),
            ..Pass::default()
        }
    }

    /// Whether the pass changed anything.
    pub fn changed(&self) -> bool {
        self.parsed + self.removed + self.from_store > 0
    }

    /// Writes the pass's changes to the store and reports it.
    pub fn finish(self, store: &Store) -> ReindexReport {
        let put: Vec<(&Path, &FileRecord, Option<&FileVectors>)> = self
            .put
            .iter()
            .map(|(p, r, v)| (p.as_path(), r, v.as_ref()))
            .collect();
        let remove: Vec<&Path> = self.remove.iter().map(PathBuf::as_path).collect();
        if let Err(err) = store.update_files(&put, &remove) {
            tracing::error!("could not write to the store: {err}");
        }
        ReindexReport {
            at: crate::time::format_instant(crate::time::now()),
            millis: self
                .started
                .map_or(0.0, |s| s.elapsed().as_secs_f64() * 1000.0),
            parsed: self.parsed,
            from_store: self.from_store,
            removed: self.removed,
        }
    }
}

fn content_hash(bytes: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    h.write(bytes);
    h.finish()
}

fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128)
}

/// Loads what the store holds, trusting a record whose file still has the
/// same size and modification time (and, with the semantic tier on, whose
/// stored vectors are the current model's), and re-parsing the rest.
pub fn load_from_store(k: &mut Knowledge, store: &Store, pass: &mut Pass) {
    let mut orphans = Vec::new();
    let model = k.engine.semantic().map(|s| s.model().id());
    let visited = store.visit_files(|path, record, stored| {
        let Some(root) = k.root_of(&path) else {
            orphans.push(path);
            return;
        };
        let scope = root.scope;
        // One `lstat`: a symlink (which may lead out of its root) is decided
        // afresh by the rescan that follows, as a refusal is: both depend
        // on the configuration.
        let same = std::fs::symlink_metadata(&path).is_ok_and(|m| {
            !m.file_type().is_symlink() && m.len() == record.size && mtime_ns(&m) == record.mtime_ns
        });
        if !same || record.hash == REFUSED_HASH {
            return; // the rescan that follows re-reads or removes it
        }
        // With the tier on, the vectors must be this model's, for this
        // content: else the file is read and embedded again.
        let vectors = match model {
            None => None,
            Some(model) => match stored {
                Some(v)
                    if v.model == model
                        && v.hash == record.hash
                        && v.vectors.len() == record.items.len() =>
                {
                    Some(v.vectors)
                }
                _ => return,
            },
        };
        // Read within its timestamp's granularity of its last change, the
        // file may have changed again since without its size or time
        // saying so: its content decides.
        let settled = record.read_at_ns - record.mtime_ns >= TIMESTAMP_GRANULARITY_NS
            || read_regular(&path).is_ok_and(|read| content_hash(&read.bytes) == record.hash);
        if !settled {
            return;
        }
        k.files.insert(
            path.clone(),
            FileMeta {
                size: record.size,
                mtime_ns: record.mtime_ns,
                hash: record.hash,
            },
        );
        // Every item of the file shares one copy of its path.
        let shared: Arc<Path> = Arc::from(path.as_path());
        let mut items = record.items;
        for item in &mut items {
            item.source.file = shared.clone();
        }
        let mut errors = record.errors;
        for error in &mut errors {
            error.file = shared.clone();
        }
        let load = FileLoad {
            path: shared,
            kind: record.kind,
            items,
            errors,
        };
        k.engine.apply_embedded(load, scope, vectors);
        pass.from_store += 1;
    });
    match visited {
        Ok(unreadable) => {
            for path in unreadable {
                tracing::warn!(
                    "the stored record of {} fails its checksum or does not decode; re-parsing the file",
                    path.display()
                );
                orphans.push(path);
            }
        }
        Err(err) => tracing::warn!("cannot read stored files, re-parsing everything: {err}"),
    }
    pass.remove.extend(orphans);
}

/// Brings one path in line with the disk: a knowledge file is (re)loaded
/// if it changed, a directory is walked, and a path that is gone takes
/// every known file at or under it with it. A symlink to a directory is
/// walked only when it is a root, as in the start-up scan; with `verify`
/// every file's content is compared.
pub fn sync_path(k: &mut Knowledge, path: &Path, pass: &mut Pass, verify: bool) {
    let is_root = k.roots.iter().any(|r| r.path == path);
    let meta = if is_root {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    };
    match meta {
        Ok(meta) if meta.is_dir() => {
            let present = knowledge_files(path);
            forget_missing(k, path, &present, pass);
            for file in present {
                sync_file(k, &file, pass, verify);
            }
        }
        Ok(_) if is_knowledge_path(path) => sync_file(k, path, pass, verify),
        // A directory replaced by a symlink: what was under it goes.
        Ok(meta) if meta.file_type().is_symlink() => forget_missing(k, path, &[], pass),
        Ok(_) => {}
        Err(_) => forget_missing(k, path, &[], pass),
    }
}

/// Rescans every root: new, changed and vanished files alike; with
/// `verify`, every file's content is compared, whatever its time says.
pub fn rescan(k: &mut Knowledge, pass: &mut Pass, verify: bool) {
    let roots: Vec<PathBuf> = k.roots.iter().map(|r| r.path.clone()).collect();
    for root in roots {
        sync_path(k, &root, pass, verify);
    }
    // Files under no root any more (a root was dropped).
    let orphans: Vec<PathBuf> = k
        .files
        .keys()
        .filter(|p| k.root_of(p).is_none())
        .cloned()
        .collect();
    for path in orphans {
        forget(k, &path, pass);
    }
}

fn forget_missing(k: &mut Knowledge, under: &Path, present: &[PathBuf], pass: &mut Pass) {
    let gone: Vec<PathBuf> = k
        .files
        .keys()
        .filter(|p| p.starts_with(under) && !present.contains(p))
        .cloned()
        .collect();
    for path in gone {
        forget(k, &path, pass);
    }
}

fn forget(k: &mut Knowledge, path: &Path, pass: &mut Pass) {
    k.files.remove(path);
    k.engine.remove_file(path);
    pass.remove.push(path.to_path_buf());
    pass.removed += 1;
}

/// How long after its modification time a file's size and time may still
/// hide a change: file systems with whole-second timestamps (ext3, HFS+,
/// some network and FUSE mounts) give two saves within a second the same
/// time, and FAT rounds to two seconds. A file modified this recently is
/// compared by content.
pub const TIMESTAMP_GRANULARITY_NS: i128 = 2_000_000_000;

/// Now, in nanoseconds since the epoch.
fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// Whether a modification time is too recent to trust size and time alone.
fn recent(mtime_ns: i128) -> bool {
    now_ns() - mtime_ns < TIMESTAMP_GRANULARITY_NS
}

/// (Re)loads one file if its size and modification time, then its content,
/// say it changed; with `verify` (a reload), or when the file was modified
/// too recently for its time to tell, the content decides. Only a regular
/// file is read, within the size limit, and not through a symlink out of
/// its root (unless the configuration allows it); one that is refused keeps
/// its last good items and reports why.
fn sync_file(k: &mut Knowledge, path: &Path, pass: &mut Pass, verify: bool) {
    let Some(root) = k.root_of(path) else { return };
    let (scope, project, root_path) = (root.scope, root.project.clone(), root.path.clone());
    let Ok(meta) = std::fs::metadata(path) else {
        if k.files.contains_key(path) {
            forget(k, path, pass);
        }
        return;
    };
    let known = k.files.get(path).copied();
    let unchanged = |m: &FileMeta| m.size == meta.len() && m.mtime_ns == mtime_ns(&meta);
    if !verify && known.is_some_and(|m| unchanged(&m) && !recent(m.mtime_ns)) {
        return;
    }
    let shared: Arc<Path> = Arc::from(path);
    let (file_meta, load) = match read_under_root(path, &root_path, k.follow_symlinks_out_of_roots)
    {
        Ok(read) => {
            let file_meta = FileMeta {
                size: read.meta.len(),
                mtime_ns: mtime_ns(&read.meta),
                hash: content_hash(&read.bytes),
            };
            if known.is_some_and(|m| m.hash == file_meta.hash) {
                k.files.insert(path.to_path_buf(), file_meta);
                return;
            }
            (file_meta, parse_file(shared, &read.bytes))
        }
        Err(ReadError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => {
            if k.files.contains_key(path) {
                forget(k, path, pass); // vanished between stat and open
            }
            return;
        }
        Err(err) => {
            let file_meta = FileMeta {
                size: meta.len(),
                mtime_ns: mtime_ns(&meta),
                hash: REFUSED_HASH,
            };
            (file_meta, unreadable_because(shared, &err))
        }
    };
    // A file that stops parsing keeps its last good items, in memory and in
    // the store.
    let (kind, items) = match (load.failed(), k.engine.files().get(path)) {
        (true, Some(state)) if !state.items.is_empty() => (
            state.kind.clone(),
            state.items.iter().map(|i| (**i).clone()).collect(),
        ),
        _ => (load.kind.clone(), load.items.clone()),
    };
    let model = k.engine.semantic().map(|s| s.model().id());
    let vectors = model
        .zip(k.engine.embed_items(&items))
        .map(|(model, vectors)| FileVectors {
            model,
            hash: file_meta.hash,
            vectors,
        });
    let record = FileRecord {
        size: file_meta.size,
        mtime_ns: file_meta.mtime_ns,
        hash: file_meta.hash,
        read_at_ns: now_ns(),
        project,
        kind,
        items,
        errors: load.errors.clone(),
    };
    if matches!(load.kind, FileKind::Ignored(_)) {
        tracing::debug!("{}: not a knowledge file", path.display());
    }
    let fresh = vectors
        .as_ref()
        .filter(|_| !load.failed())
        .map(|v| v.vectors.clone());
    k.engine.apply_embedded(load, scope, fresh);
    k.files.insert(path.to_path_buf(), file_meta);
    pass.put.push((path.to_path_buf(), record, vectors));
    pass.parsed += 1;
}

/// The hash recorded for a file that was refused: no content hashes to it
/// in practice, so the next read of real content is always taken.
const REFUSED_HASH: u64 = 0;

/// The global roots and the registered projects' roots, in scope order.
pub fn roots_for(global: &[PathBuf], projects: &[PathBuf]) -> Vec<(PathBuf, Option<PathBuf>)> {
    let mut roots: Vec<(PathBuf, Option<PathBuf>)> =
        global.iter().map(|r| (r.clone(), None)).collect();
    for repo in projects {
        for sub in [".claude/memory", ".memd"] {
            roots.push((repo.join(sub), Some(repo.clone())));
        }
    }
    roots
}

//! Bringing the in-memory knowledge and the store in line with the files on
//! disk. Every event is only a hint that "this path may have changed": the
//! path's current state decides, by size and modification time, then by
//! content hash, so any way of saving (in place, temp file and rename, vim's
//! backup dance, `sed -i`) ends in the same place.

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, UNIX_EPOCH};

use crate::knowledge::scan::{is_knowledge_path, knowledge_files};
use crate::knowledge::{parse_file, FileKind, FileLoad, MAX_FILE_BYTES};
use crate::protocol::ReindexReport;
use crate::store::{FileRecord, Store};

use super::state::{FileMeta, Knowledge};

/// Counts of one pass.
#[derive(Default)]
pub struct Pass {
    started: Option<Instant>,
    parsed: u64,
    from_store: u64,
    removed: u64,
    put: Vec<(PathBuf, FileRecord)>,
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
        let put: Vec<(&Path, &FileRecord)> =
            self.put.iter().map(|(p, r)| (p.as_path(), r)).collect();
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
/// same size and modification time, and re-parsing the rest.
pub fn load_from_store(k: &mut Knowledge, store: &Store, pass: &mut Pass) {
    let mut orphans = Vec::new();
    let visited = store.visit_files(|path, record| {
        let Some(root) = k.root_of(&path) else {
            orphans.push(path);
            return;
        };
        let scope = root.scope;
        let same = std::fs::metadata(&path)
            .is_ok_and(|m| m.len() == record.size && mtime_ns(&m) == record.mtime_ns);
        if !same {
            return; // the rescan that follows re-parses or removes it
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
        k.engine.apply_scoped(load, scope);
        pass.from_store += 1;
    });
    match visited {
        Ok(unreadable) => {
            for path in unreadable {
                tracing::warn!(
                    "stored record of {} does not decode; re-parsing it",
                    path.display()
                );
            }
        }
        Err(err) => tracing::warn!("cannot read stored files, re-parsing everything: {err}"),
    }
    pass.remove.extend(orphans);
}

/// Brings one path in line with the disk: a knowledge file is (re)loaded
/// if it changed, a directory is walked, and a path that is gone takes
/// every known file at or under it with it.
pub fn sync_path(k: &mut Knowledge, path: &Path, pass: &mut Pass) {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let present = knowledge_files(path);
            forget_missing(k, path, &present, pass);
            for file in present {
                sync_file(k, &file, pass);
            }
        }
        Ok(_) if is_knowledge_path(path) => sync_file(k, path, pass),
        Ok(_) => {}
        Err(_) => forget_missing(k, path, &[], pass),
    }
}

/// Rescans every root: new, changed and vanished files alike.
pub fn rescan(k: &mut Knowledge, pass: &mut Pass) {
    let roots: Vec<PathBuf> = k.roots.iter().map(|r| r.path.clone()).collect();
    for root in roots {
        sync_path(k, &root, pass);
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

/// (Re)loads one file if its size, modification time and then content say
/// it changed.
fn sync_file(k: &mut Knowledge, path: &Path, pass: &mut Pass) {
    let Some(root) = k.root_of(path) else { return };
    let (scope, project) = (root.scope, root.project.clone());
    let Ok(meta) = std::fs::metadata(path) else {
        if k.files.contains_key(path) {
            forget(k, path, pass);
        }
        return;
    };
    let (size, mtime) = (meta.len(), mtime_ns(&meta));
    let known = k.files.get(path).copied();
    if known.is_some_and(|m| m.size == size && m.mtime_ns == mtime) {
        return;
    }
    let bytes = if size > MAX_FILE_BYTES {
        Vec::new()
    } else {
        match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(_) => return, // vanished between stat and read: the next event says so
        }
    };
    let hash = content_hash(&bytes);
    let file_meta = FileMeta {
        size,
        mtime_ns: mtime,
        hash,
    };
    if known.is_some_and(|m| m.hash == hash && size <= MAX_FILE_BYTES) {
        k.files.insert(path.to_path_buf(), file_meta);
        return;
    }
    let shared: Arc<Path> = Arc::from(path);
    let load = if size > MAX_FILE_BYTES {
        crate::knowledge::load_file(path)
    } else {
        parse_file(shared, &bytes)
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
    let record = FileRecord {
        size,
        mtime_ns: mtime,
        hash,
        project,
        kind,
        items,
        errors: load.errors.clone(),
    };
    if matches!(load.kind, FileKind::Ignored(_)) {
        tracing::debug!("{}: not a knowledge file", path.display());
    }
    k.engine.apply_scoped(load, scope);
    k.files.insert(path.to_path_buf(), file_meta);
    pass.put.push((path.to_path_buf(), record));
    pass.parsed += 1;
}

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

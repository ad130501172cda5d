//! Persistence in redb: every loaded file's metadata and parsed items, and
//! the registered projects, so a restart loads the index without re-parsing
//! unchanged files. Values are postcard and are decoded with a `Result`: a
//! record that does not decode is dropped (its file is simply re-parsed).
//! A database of another schema version, or one that cannot be opened, is
//! set aside and rebuilt from the source files, with a warning, never a
//! crash. Learned state is never written back into the user's files.

use std::path::{Path, PathBuf};

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};

use crate::engine::{Judgement, Pin};
use crate::knowledge::{Diagnostic, FileKind, Item};
use crate::scoring::tag_relevance::TagScore;

/// redb's page cache. The store is read once at start-up and written a
/// file at a time, so a small cache costs nothing and keeps the daemon's
/// memory for the index.
const CACHE_BYTES: usize = 2 * 1024 * 1024;

/// Bumped whenever a stored type changes shape.
pub const SCHEMA_VERSION: u32 = 2;

type Table = TableDefinition<'static, &'static str, &'static [u8]>;

const META: Table = TableDefinition::new("meta");
const FILES: Table = TableDefinition::new("files");
const PROJECTS: Table = TableDefinition::new("projects");
/// Learned state. It has no other source, so a database that must be
/// rebuilt loses it: `memctl export` keeps a copy.
const TAG_RELEVANCE: Table = TableDefinition::new("tag_relevance");
const APPLICATIONS: Table = TableDefinition::new("applications");
const PINS: Table = TableDefinition::new("pins");
const MATCHES: Table = TableDefinition::new("matches");
const SESSIONS: Table = TableDefinition::new("sessions");
/// Sessions seen per context (sorted tags joined by `,`).
const CONTEXTS: Table = TableDefinition::new("contexts");
/// Every judgement applied, per item in order (`item`, separator, a
/// zero-padded sequence number): what `evaluate --force` replays.
const JOURNAL: Table = TableDefinition::new("journal");
/// The next journal sequence number, in `META`.
const JOURNAL_NEXT: &str = "journal_next";
const ALL_TABLES: [Table; 10] = [
    META,
    FILES,
    PROJECTS,
    TAG_RELEVANCE,
    APPLICATIONS,
    PINS,
    MATCHES,
    SESSIONS,
    CONTEXTS,
    JOURNAL,
];

/// Separates the parts of a composite key (item, tag).
const KEY_SEP: char = '\u{1f}';

/// One agent session as audited (seed 001's `session_audit`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionAudit {
    /// Items shown, in order, each once.
    pub shown: Vec<String>,
    /// The environment tags of the session's queries.
    pub tags: Vec<String>,
    pub repo: Option<String>,
    /// The transcript, when the hook knows it.
    pub transcript: Option<String>,
    /// The session ended: ready for evaluation.
    pub ended: bool,
    /// Transcript bytes already evaluated.
    pub evaluated_bytes: u64,
    /// Evaluated since it last changed.
    pub processed: bool,
    /// Unix seconds of the last change.
    pub updated_at: i64,
    /// How many of `shown`, from the first, have been judged: an item is
    /// judged once, by the first evaluation after it was shown.
    pub judged: u32,
    /// The mark ([`crate::evaluate::prompt_mark`]) of the prompt each item
    /// was shown on; items shown at session start have none. The built-in
    /// judge reads only what the agent did after that prompt.
    pub shown_on: std::collections::BTreeMap<String, u64>,
}

/// A session audit as stored before it kept the prompts items were shown
/// on: the earlier layout and `judged` (postcard lays a nested struct's
/// fields out in order); read with no marks, so the judge reads the whole
/// new part.
#[derive(Deserialize)]
struct SessionAuditBeforeShownOn {
    before: SessionAuditBeforeJudged,
    judged: u32,
}

impl From<SessionAuditBeforeShownOn> for SessionAudit {
    fn from(old: SessionAuditBeforeShownOn) -> Self {
        SessionAudit {
            judged: old.judged,
            ..SessionAudit::from(old.before)
        }
    }
}

/// A session audit as stored before `judged` existed; read and converted,
/// so no audit is lost to the upgrade.
#[derive(Deserialize)]
struct SessionAuditBeforeJudged {
    shown: Vec<String>,
    tags: Vec<String>,
    repo: Option<String>,
    transcript: Option<String>,
    ended: bool,
    evaluated_bytes: u64,
    processed: bool,
    updated_at: i64,
}

impl From<SessionAuditBeforeJudged> for SessionAudit {
    fn from(old: SessionAuditBeforeJudged) -> Self {
        // A session evaluated before had every item it showed judged then
        // (or is unknowable): none of them is judged twice.
        let judged = if old.evaluated_bytes > 0 || old.processed {
            old.shown.len() as u32
        } else {
            0
        };
        SessionAudit {
            shown: old.shown,
            tags: old.tags,
            repo: old.repo,
            transcript: old.transcript,
            ended: old.ended,
            evaluated_bytes: old.evaluated_bytes,
            processed: old.processed,
            updated_at: old.updated_at,
            judged,
            shown_on: Default::default(),
        }
    }
}

/// An item's journal key: sorted by item, then in the order judged.
fn journal_key(item: &str, seq: u64) -> String {
    format!("{item}{KEY_SEP}{seq:020}")
}

/// Decodes a stored session audit of either layout.
fn decode_audit(bytes: &[u8]) -> Option<SessionAudit> {
    postcard::from_bytes::<SessionAudit>(bytes)
        .ok()
        .or_else(|| {
            postcard::from_bytes::<SessionAuditBeforeShownOn>(bytes)
                .ok()
                .map(SessionAudit::from)
        })
        .or_else(|| {
            postcard::from_bytes::<SessionAuditBeforeJudged>(bytes)
                .ok()
                .map(SessionAudit::from)
        })
}

/// A tag score as stored before it counted the prompts held back; read as
/// nothing held back since.
#[derive(Deserialize)]
struct TagScoreBeforeHeld {
    score: f64,
    positive: u32,
    negative: u32,
}

/// Decodes a stored tag score of either layout.
fn decode_tag_score(bytes: &[u8]) -> Option<TagScore> {
    postcard::from_bytes::<TagScore>(bytes).ok().or_else(|| {
        postcard::from_bytes::<TagScoreBeforeHeld>(bytes)
            .ok()
            .map(|old| TagScore {
                score: old.score,
                positive: old.positive,
                negative: old.negative,
                held: 0,
            })
    })
}

/// A change to learned state, written in one transaction.
#[derive(Debug, Default)]
pub struct LearnedWrite<'a> {
    pub tag_scores: Vec<(&'a str, &'a str, TagScore)>,
    pub applications: Vec<(&'a str, &'a crate::engine::Applications)>,
    /// An item's automatic pins, all of them (empty: none).
    pub pins: Vec<(&'a str, &'a [Pin])>,
    pub matches: Vec<(&'a str, &'a str, u32)>,
    pub sessions: Vec<(&'a str, &'a SessionAudit)>,
    /// A context's session count.
    pub contexts: Vec<(&'a str, u64)>,
    /// Tag scores no judgement makes any more: (item, tag).
    pub tag_scores_removed: Vec<(&'a str, &'a str)>,
    /// Journal entries to drop: (item, sequence number).
    pub journal_removed: Vec<(&'a str, u64)>,
    /// Judgements to journal: (item, its place, the judgement); a place of
    /// `None` is after every other.
    pub journal: Vec<(&'a str, Option<u64>, &'a Judgement)>,
}

/// A file as stored: enough to tell whether it changed, and its contents.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileRecord {
    /// Size in bytes when read.
    pub size: u64,
    /// Modification time when read, nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Hash of the content.
    pub hash: u64,
    /// The project it belongs to (`None`: a global root).
    pub project: Option<PathBuf>,
    pub kind: FileKind,
    pub items: Vec<Item>,
    pub errors: Vec<Diagnostic>,
}

/// The stored files that decode, and the paths of those that do not.
pub type StoredFiles = (Vec<(PathBuf, FileRecord)>, Vec<PathBuf>);

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("redb: {0}")]
    Db(#[from] redb::Error),
    #[error("cannot encode a record: {0}")]
    Encode(#[from] postcard::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

macro_rules! db_err {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                StoreError::Db(e.into())
            }
        }
    )*};
}
db_err!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// The database.
pub struct Store {
    db: Database,
}

/// What opening found.
#[derive(Debug, Default)]
pub struct OpenReport {
    /// Why the database was rebuilt from scratch, if it was.
    pub rebuilt: Option<String>,
}

impl Store {
    /// Opens (or creates) the database at `path`. Another daemon holding it
    /// is an error; a corrupt database or another schema version is moved
    /// aside and a fresh one created.
    pub fn open(path: &Path) -> Result<(Store, OpenReport), StoreError> {
        let mut report = OpenReport::default();
        let db = match Database::builder().set_cache_size(CACHE_BYTES).create(path) {
            Ok(db) => db,
            Err(redb::DatabaseError::DatabaseAlreadyOpen) => {
                return Err(redb::DatabaseError::DatabaseAlreadyOpen.into())
            }
            Err(err) => {
                report.rebuilt = Some(format!("could not open the database ({err})"));
                set_aside(path)?;
                Database::builder()
                    .set_cache_size(CACHE_BYTES)
                    .create(path)?
            }
        };
        let store = Store { db };
        match store.schema_version() {
            Ok(Some(SCHEMA_VERSION)) => {}
            Ok(None) => store.reset()?,
            Ok(Some(other)) => {
                report.rebuilt = Some(format!(
                    "schema version {other}, this build uses {SCHEMA_VERSION}"
                ));
                store.reset()?;
            }
            Err(err) => {
                report.rebuilt = Some(format!("unreadable schema ({err})"));
                store.reset()?;
            }
        }
        Ok((store, report))
    }

    fn schema_version(&self) -> Result<Option<u32>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = match txn.open_table(META) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let Some(value) = table.get("schema")? else {
            return Ok(None);
        };
        Ok(postcard::from_bytes::<u32>(value.value()).ok())
    }

    /// Empties every table and writes the schema version.
    fn reset(&self) -> Result<(), StoreError> {
        let txn = self.db.begin_write()?;
        for table in ALL_TABLES {
            txn.delete_table(table)?;
        }
        txn.open_table(META)?
            .insert("schema", postcard::to_allocvec(&SCHEMA_VERSION)?.as_slice())?;
        for table in ALL_TABLES {
            txn.open_table(table)?;
        }
        txn.commit()?;
        Ok(())
    }

    /// Writes a change to learned state; returns once it is committed.
    pub fn write_learned(&self, write: &LearnedWrite<'_>) -> Result<(), StoreError> {
        let txn = self.db.begin_write()?;
        {
            let mut table = txn.open_table(TAG_RELEVANCE)?;
            for (item, tag, score) in &write.tag_scores {
                let key = format!("{item}{KEY_SEP}{tag}");
                table.insert(key.as_str(), postcard::to_allocvec(score)?.as_slice())?;
            }
            for (item, tag) in &write.tag_scores_removed {
                table.remove(format!("{item}{KEY_SEP}{tag}").as_str())?;
            }
            let mut table = txn.open_table(APPLICATIONS)?;
            for (item, applications) in &write.applications {
                table.insert(*item, postcard::to_allocvec(applications)?.as_slice())?;
            }
            let mut table = txn.open_table(PINS)?;
            for (item, pins) in &write.pins {
                // Keyed by item and scope; a key of the item alone is a
                // pin stored before pins were scoped.
                let prefix = format!("{item}{KEY_SEP}");
                let stale: Vec<String> = table
                    .range(prefix.as_str()..)?
                    .map_while(|e| {
                        e.ok()
                            .map(|(k, _)| k.value().to_string())
                            .filter(|k| k.starts_with(&prefix))
                    })
                    .collect();
                for key in &stale {
                    table.remove(key.as_str())?;
                }
                table.remove(*item)?;
                for pin in pins.iter() {
                    let key = format!("{prefix}{}", pin.tags.join(","));
                    table.insert(key.as_str(), postcard::to_allocvec(pin)?.as_slice())?;
                }
            }
            let mut table = txn.open_table(MATCHES)?;
            for (item, subset, count) in &write.matches {
                let key = format!("{item}{KEY_SEP}{subset}");
                table.insert(key.as_str(), postcard::to_allocvec(count)?.as_slice())?;
            }
            let mut table = txn.open_table(SESSIONS)?;
            for (id, audit) in &write.sessions {
                table.insert(*id, postcard::to_allocvec(audit)?.as_slice())?;
            }
            let mut table = txn.open_table(CONTEXTS)?;
            for (context, sessions) in &write.contexts {
                table.insert(*context, postcard::to_allocvec(sessions)?.as_slice())?;
            }
            let mut table = txn.open_table(JOURNAL)?;
            for (item, seq) in &write.journal_removed {
                table.remove(journal_key(item, *seq).as_str())?;
            }
            if !write.journal.is_empty() {
                let mut meta = txn.open_table(META)?;
                let mut next = match meta.get(JOURNAL_NEXT)? {
                    Some(v) => postcard::from_bytes::<u64>(v.value()).unwrap_or(0),
                    None => 0,
                };
                for (item, at, judgement) in &write.journal {
                    let seq = at.unwrap_or_else(|| {
                        next += 1;
                        next
                    });
                    let key = journal_key(item, seq);
                    table.insert(key.as_str(), postcard::to_allocvec(judgement)?.as_slice())?;
                }
                meta.insert(JOURNAL_NEXT, postcard::to_allocvec(&next)?.as_slice())?;
            }
        }
        txn.commit()?;
        Ok(())
    }

    /// The judgements applied to `item`, in order, with their sequence
    /// numbers. Entries that do not decode are skipped: the caller checks
    /// the journal against the scores before relying on it
    /// ([`crate::engine::Learned::replays_to_current`]).
    pub fn journal(&self, item: &str) -> Result<Vec<(u64, Judgement)>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = match txn.open_table(JOURNAL) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let prefix = format!("{item}{KEY_SEP}");
        let mut out = Vec::new();
        for entry in table.range(prefix.as_str()..)? {
            let (key, value) = entry?;
            let Some(seq) = key.value().strip_prefix(&prefix) else {
                break;
            };
            if let (Ok(seq), Ok(judgement)) = (
                seq.parse::<u64>(),
                postcard::from_bytes::<Judgement>(value.value()),
            ) {
                out.push((seq, judgement));
            }
        }
        Ok(out)
    }

    /// Everything learned, for the engine. Values that do not decode are
    /// skipped with a warning.
    pub fn learned(&self) -> Result<crate::engine::Learned, StoreError> {
        let mut learned = crate::engine::Learned::default();
        let txn = self.db.begin_read()?;
        let split = |key: &str| {
            key.split_once(KEY_SEP)
                .map(|(a, b)| (a.to_string(), b.to_string()))
        };
        for entry in txn.open_table(TAG_RELEVANCE)?.iter()? {
            let (key, value) = entry?;
            if let (Some((item, tag)), Some(score)) =
                (split(key.value()), decode_tag_score(value.value()))
            {
                learned
                    .tag_relevance
                    .entry(item)
                    .or_default()
                    .insert(tag, score);
            }
        }
        for entry in txn.open_table(APPLICATIONS)?.iter()? {
            let (key, value) = entry?;
            if let Ok(applications) = postcard::from_bytes(value.value()) {
                learned
                    .applications
                    .insert(key.value().to_string(), applications);
            }
        }
        for entry in txn.open_table(PINS)?.iter()? {
            let (key, value) = entry?;
            let item = key.value().split(KEY_SEP).next().unwrap_or_default();
            if let Ok(pin) = postcard::from_bytes::<Pin>(value.value()) {
                // An automatic pin for every context is what pins were
                // before they were scoped: it is not carried over.
                if pin.manual || !pin.tags.is_empty() {
                    learned.pins.entry(item.to_string()).or_default().push(pin);
                }
            }
        }
        match txn.open_table(CONTEXTS) {
            Ok(table) => {
                for entry in table.iter()? {
                    let (key, value) = entry?;
                    if let Ok(sessions) = postcard::from_bytes::<u64>(value.value()) {
                        learned.set_context(key.value().to_string(), sessions);
                    }
                }
            }
            // A database from before contexts were counted.
            Err(redb::TableError::TableDoesNotExist(_)) => {}
            Err(e) => return Err(e.into()),
        }
        for entry in txn.open_table(MATCHES)?.iter()? {
            let (key, value) = entry?;
            if let (Some((item, subset)), Ok(count)) =
                (split(key.value()), postcard::from_bytes(value.value()))
            {
                learned
                    .matches
                    .entry(item)
                    .or_default()
                    .insert(subset, count);
            }
        }
        Ok(learned)
    }

    /// Every audited session.
    pub fn sessions(&self) -> Result<Vec<(String, SessionAudit)>, StoreError> {
        let txn = self.db.begin_read()?;
        let mut out = Vec::new();
        for entry in txn.open_table(SESSIONS)?.iter()? {
            let (key, value) = entry?;
            if let Some(audit) = decode_audit(value.value()) {
                out.push((key.value().to_string(), audit));
            }
        }
        Ok(out)
    }

    /// Calls `visit` with each stored file that decodes, one at a time (so
    /// start-up never holds every record at once); returns the paths of
    /// those that do not, so their files are re-parsed.
    pub fn visit_files(
        &self,
        mut visit: impl FnMut(PathBuf, FileRecord),
    ) -> Result<Vec<PathBuf>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(FILES)?;
        let mut bad = Vec::new();
        for entry in table.iter()? {
            let (key, value) = entry?;
            let path = PathBuf::from(key.value());
            match postcard::from_bytes::<FileRecord>(value.value()) {
                Ok(record) => visit(path, record),
                Err(_) => bad.push(path),
            }
        }
        Ok(bad)
    }

    /// Every stored file that decodes, and the paths of those that do not.
    pub fn files(&self) -> Result<StoredFiles, StoreError> {
        let mut good = Vec::new();
        let bad = self.visit_files(|path, record| good.push((path, record)))?;
        Ok((good, bad))
    }

    /// Writes and removes file records in one transaction.
    pub fn update_files(
        &self,
        put: &[(&Path, &FileRecord)],
        remove: &[&Path],
    ) -> Result<(), StoreError> {
        if put.is_empty() && remove.is_empty() {
            return Ok(());
        }
        let txn = self.db.begin_write()?;
        {
            let mut table = txn.open_table(FILES)?;
            for (path, record) in put {
                let bytes = postcard::to_allocvec(record)?;
                table.insert(path.to_string_lossy().as_ref(), bytes.as_slice())?;
            }
            for path in remove {
                table.remove(path.to_string_lossy().as_ref())?;
            }
        }
        txn.commit()?;
        Ok(())
    }

    /// The registered projects.
    pub fn projects(&self) -> Result<Vec<PathBuf>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(PROJECTS)?;
        let mut out = Vec::new();
        for entry in table.iter()? {
            out.push(PathBuf::from(entry?.0.value()));
        }
        Ok(out)
    }

    /// Registers a project for good.
    pub fn add_project(&self, repo: &Path) -> Result<(), StoreError> {
        let txn = self.db.begin_write()?;
        txn.open_table(PROJECTS)?
            .insert(repo.to_string_lossy().as_ref(), [].as_slice())?;
        txn.commit()?;
        Ok(())
    }
}

/// Moves a database that cannot be used out of the way, keeping it for
/// inspection.
fn set_aside(path: &Path) -> Result<(), StoreError> {
    if path.exists() {
        let mut aside = path.as_os_str().to_owned();
        aside.push(format!(".broken-{}", crate::time::now()));
        std::fs::rename(path, PathBuf::from(aside))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::parse_file;
    use std::sync::Arc;

    fn record() -> FileRecord {
        let load = parse_file(
            Arc::from(Path::new("/k/g.yaml")),
            b"gotchas:\n  - {id: G-1, title: t, fix: f, category: db}\n",
        );
        FileRecord {
            size: 10,
            mtime_ns: 5,
            hash: 7,
            project: None,
            kind: load.kind,
            items: load.items,
            errors: load.errors,
        }
    }

    #[test]
    fn audits_stored_before_judged_existed_are_read() {
        // The earlier layout, field for field.
        #[derive(Serialize)]
        struct Old<'a> {
            shown: &'a [&'a str],
            tags: &'a [&'a str],
            repo: Option<&'a str>,
            transcript: Option<&'a str>,
            ended: bool,
            evaluated_bytes: u64,
            processed: bool,
            updated_at: i64,
        }
        let old = |evaluated_bytes, processed| {
            postcard::to_allocvec(&Old {
                shown: &["P-1", "G-2"],
                tags: &["rust"],
                repo: Some("r"),
                transcript: Some("/t.jsonl"),
                ended: true,
                evaluated_bytes,
                processed,
                updated_at: 9,
            })
            .unwrap()
        };
        let pending = decode_audit(&old(0, false)).unwrap();
        assert_eq!(pending.shown, ["P-1", "G-2"]);
        assert_eq!((pending.judged, pending.updated_at), (0, 9));
        let evaluated = decode_audit(&old(120, true)).unwrap();
        assert_eq!(evaluated.judged, 2);
        // The layout with `judged` but no prompt marks.
        #[derive(Serialize)]
        struct WithJudged<'a> {
            old: Old<'a>,
            judged: u32,
        }
        let with_judged = postcard::to_allocvec(&WithJudged {
            old: Old {
                shown: &["P-1"],
                tags: &[],
                repo: None,
                transcript: None,
                ended: false,
                evaluated_bytes: 0,
                processed: false,
                updated_at: 3,
            },
            judged: 1,
        })
        .unwrap();
        let read = decode_audit(&with_judged).unwrap();
        assert_eq!((read.judged, read.updated_at), (1, 3));
        assert!(read.shown_on.is_empty());
        // And the current layout round-trips as itself.
        let now = SessionAudit {
            judged: 1,
            shown_on: [("P-1".to_string(), 7)].into(),
            ..evaluated.clone()
        };
        assert_eq!(
            decode_audit(&postcard::to_allocvec(&now).unwrap()),
            Some(now)
        );
    }

    #[test]
    fn records_and_projects_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memd.redb");
        {
            let (store, report) = Store::open(&path).unwrap();
            assert!(report.rebuilt.is_none());
            store
                .update_files(&[(Path::new("/k/g.yaml"), &record())], &[])
                .unwrap();
            store.add_project(Path::new("/src/app")).unwrap();
        }
        let (store, _) = Store::open(&path).unwrap();
        let (files, bad) = store.files().unwrap();
        assert!(bad.is_empty());
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].1.items[0].id, "G-1");
        assert_eq!(store.projects().unwrap(), [PathBuf::from("/src/app")]);
        store.update_files(&[], &[Path::new("/k/g.yaml")]).unwrap();
        assert!(store.files().unwrap().0.is_empty());
    }

    #[test]
    fn a_corrupt_database_is_set_aside_and_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memd.redb");
        std::fs::write(&path, b"this is not a redb file at all, just some bytes").unwrap();
        let (store, report) = Store::open(&path).unwrap();
        assert!(report.rebuilt.is_some());
        assert!(store.files().unwrap().0.is_empty());
        let aside = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(aside, 2, "the broken file is kept beside the new one");
    }

    #[test]
    fn another_schema_version_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memd.redb");
        {
            let (store, _) = Store::open(&path).unwrap();
            store
                .update_files(&[(Path::new("/k/g.yaml"), &record())], &[])
                .unwrap();
            let txn = store.db.begin_write().unwrap();
            txn.open_table(META)
                .unwrap()
                .insert("schema", postcard::to_allocvec(&999u32).unwrap().as_slice())
                .unwrap();
            txn.commit().unwrap();
        }
        let (store, report) = Store::open(&path).unwrap();
        assert!(report.rebuilt.unwrap().contains("999"));
        assert!(store.files().unwrap().0.is_empty());
    }

    #[test]
    fn a_second_opener_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memd.redb");
        let _first = Store::open(&path).unwrap();
        assert!(Store::open(&path).is_err());
    }
}

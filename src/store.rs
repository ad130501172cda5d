//! Persistence in redb: every loaded file's metadata and parsed items, and
//! the registered projects, so a restart loads the index without re-parsing
//! unchanged files, and the learned state.
//!
//! Every value is sealed: a CRC-32 of its key and its postcard payload comes
//! first, and is checked before the value is used, so a flipped bit or a
//! page from another version is never served: a file record that fails is
//! re-parsed from its file, a learned record that fails is dropped with a
//! warning. A database that cannot be opened or read (redb errors, or
//! panics, on a corrupt file) is set aside and rebuilt from the source
//! files, keeping the learned records that still verify; one of another
//! schema version is rebuilt (the previous version is upgraded in place).
//! After an I/O error (a full disk) the database is reopened on the next
//! use, so learning resumes once space is back. Learned state is never
//! written back into the user's files.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::knowledge::{Diagnostic, FileKind, Item};
use crate::learning::tag_relevance::{TagScore, EMA_ALPHA};
use crate::learning::{Judgement, Pin, SessionAudit};

/// redb's page cache. The store is read once at start-up and written a
/// file at a time, so a small cache costs nothing and keeps the daemon's
/// memory for the index.
const CACHE_BYTES: usize = 2 * 1024 * 1024;

/// Bumped whenever a stored type changes shape.
pub const SCHEMA_VERSION: u32 = 3;
/// The version before values were sealed: upgraded in place, learned state
/// kept (file records are re-parsed).
const UNSEALED_VERSION: u32 = 2;

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
/// The semantic tier's vectors of each file's items (by path, beside its
/// record), so a restart does not embed again.
const VECTORS: Table = TableDefinition::new("vectors");
/// The next journal sequence number, in `META`.
const JOURNAL_NEXT: &str = "journal_next";
const ALL_TABLES: [Table; 11] = [
    META,
    FILES,
    VECTORS,
    PROJECTS,
    TAG_RELEVANCE,
    APPLICATIONS,
    PINS,
    MATCHES,
    SESSIONS,
    CONTEXTS,
    JOURNAL,
];

/// The tables whose records have no other source than the database (the
/// registered projects and the learned state): kept across an upgrade and
/// salvaged from a database set aside.
const KEPT_TABLES: [Table; 8] = [
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

/// The CRC-32 of a key and a payload.
fn checksum(key: &str, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(key.as_bytes());
    h.update(&[0]);
    h.update(payload);
    h.finalize()
}

/// A stored value: the checksum of its key and payload, then the payload.
fn seal_bytes(key: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + payload.len());
    out.extend_from_slice(&checksum(key, payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// `value` encoded and sealed under `key`.
fn seal<T: Serialize + ?Sized>(key: &str, value: &T) -> Result<Vec<u8>, StoreError> {
    Ok(seal_bytes(key, &postcard::to_allocvec(value)?))
}

/// The payload of a stored value, if its checksum holds for `key`.
fn unseal<'a>(key: &str, bytes: &'a [u8]) -> Option<&'a [u8]> {
    let (sum, payload) = bytes.split_first_chunk::<4>()?;
    (u32::from_le_bytes(*sum) == checksum(key, payload)).then_some(payload)
}

/// A stored value decoded, if it verifies and decodes.
fn open<T: serde::de::DeserializeOwned>(key: &str, bytes: &[u8]) -> Option<T> {
    postcard::from_bytes(unseal(key, bytes)?).ok()
}

/// A session audit as stored before it kept the items shown on a weak
/// match; read as none, so every verdict counts as the seed counts it.
#[derive(Deserialize)]
struct SessionAuditBeforeWeak {
    before: SessionAuditBeforeShownOn,
    shown_on: std::collections::BTreeMap<String, u64>,
}

impl From<SessionAuditBeforeWeak> for SessionAudit {
    fn from(old: SessionAuditBeforeWeak) -> Self {
        SessionAudit {
            shown_on: old.shown_on,
            ..SessionAudit::from(old.before)
        }
    }
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
            weak: Vec::new(),
        }
    }
}

/// An item's journal key: sorted by item, then in the order judged.
fn journal_key(item: &str, seq: u64) -> String {
    format!("{item}{KEY_SEP}{seq:020}")
}

/// Decodes `bytes` as the stored layout `T`, read as today's `U`.
fn decode_layout<T: DeserializeOwned, U: From<T>>(bytes: &[u8]) -> Option<U> {
    postcard::from_bytes::<T>(bytes).ok().map(U::from)
}

/// Decodes a stored session audit of any layout.
fn decode_audit(bytes: &[u8]) -> Option<SessionAudit> {
    decode_layout::<SessionAudit, _>(bytes)
        .or_else(|| decode_layout::<SessionAuditBeforeWeak, _>(bytes))
        .or_else(|| decode_layout::<SessionAuditBeforeShownOn, _>(bytes))
        .or_else(|| decode_layout::<SessionAuditBeforeJudged, _>(bytes))
}

/// A tag score as stored before it counted the prompts held back; read as
/// nothing held back since.
#[derive(Deserialize)]
struct TagScoreBeforeHeld {
    score: f64,
    positive: u32,
    negative: u32,
}

/// A tag score as stored before a verdict could put it on trial; read as
/// not on trial.
#[derive(Deserialize)]
struct TagScoreBeforeTrial {
    score: f64,
    positive: u32,
    negative: u32,
    held: u32,
}

/// A tag score as stored before it kept the weights of its verdicts; read
/// as made by the evaluator's verdicts alone (weight 1.0).
#[derive(Deserialize)]
struct TagScoreBeforeUnit {
    score: f64,
    positive: u32,
    negative: u32,
    held: u32,
    trial: bool,
}

/// A tag score as stored before it kept the balance of its verdicts since
/// a run against it ([`TagScore::balance`]); read as owing nothing.
#[derive(Deserialize)]
struct TagScoreBeforeBalance {
    score: f64,
    positive: u32,
    negative: u32,
    held: u32,
    trial: bool,
    weights: f64,
    verdicts: f64,
}

impl From<TagScoreBeforeBalance> for TagScore {
    fn from(old: TagScoreBeforeBalance) -> TagScore {
        TagScore {
            score: old.score,
            positive: old.positive,
            negative: old.negative,
            held: old.held,
            trial: old.trial,
            weights: old.weights,
            verdicts: old.verdicts,
            balance: 0,
        }
    }
}

impl From<TagScoreBeforeHeld> for TagScore {
    fn from(old: TagScoreBeforeHeld) -> TagScore {
        TagScore::from(TagScoreBeforeTrial {
            score: old.score,
            positive: old.positive,
            negative: old.negative,
            held: 0,
        })
    }
}

impl From<TagScoreBeforeTrial> for TagScore {
    fn from(old: TagScoreBeforeTrial) -> TagScore {
        TagScore::from(TagScoreBeforeUnit {
            score: old.score,
            positive: old.positive,
            negative: old.negative,
            held: old.held,
            trial: false,
        })
    }
}

impl From<TagScoreBeforeUnit> for TagScore {
    fn from(old: TagScoreBeforeUnit) -> TagScore {
        // The EMA of one per verdict over its verdicts, from 0; with each
        // weighing 1.0, the weights' is the same.
        let verdicts = 1.0 - (1.0 - EMA_ALPHA).powf(f64::from(old.positive + old.negative));
        TagScore::from(TagScoreBeforeBalance {
            score: old.score,
            positive: old.positive,
            negative: old.negative,
            held: old.held,
            trial: old.trial,
            weights: verdicts,
            verdicts,
        })
    }
}

/// Decodes a stored tag score of any layout (the newest first: an older
/// layout is a prefix of a newer one, so it fails to decode as one).
fn decode_tag_score(bytes: &[u8]) -> Option<TagScore> {
    decode_layout::<TagScore, _>(bytes)
        .or_else(|| decode_layout::<TagScoreBeforeBalance, _>(bytes))
        .or_else(|| decode_layout::<TagScoreBeforeUnit, _>(bytes))
        .or_else(|| decode_layout::<TagScoreBeforeTrial, _>(bytes))
        .or_else(|| decode_layout::<TagScoreBeforeHeld, _>(bytes))
}

/// A change to learned state, written in one transaction.
#[derive(Debug, Default)]
pub struct LearnedWrite<'a> {
    pub tag_scores: Vec<(&'a str, &'a str, TagScore)>,
    pub applications: Vec<(&'a str, &'a crate::learning::Applications)>,
    /// An item's automatic pins, all of them (empty: none).
    pub pins: Vec<(&'a str, &'a [Pin])>,
    pub matches: Vec<(&'a str, &'a str, u32)>,
    pub sessions: Vec<(&'a str, &'a SessionAudit)>,
    /// Session audits to forget.
    pub sessions_removed: Vec<&'a str>,
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
    /// When the content was read, nanoseconds since the epoch: size and
    /// time are trusted at start-up only if it was read well after it was
    /// last modified (see the indexer's timestamp granularity).
    pub read_at_ns: i128,
    /// The project it belongs to (`None`: a global root).
    pub project: Option<PathBuf>,
    pub kind: FileKind,
    pub items: Vec<Item>,
    pub errors: Vec<Diagnostic>,
}

/// The vectors a model gave a file's items, in item order, stored beside
/// its record: used only for the same content and the same model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileVectors {
    /// The model's id ([`crate::semantic::Model::id`]).
    pub model: u64,
    /// The content hash of the file they were made from.
    pub hash: u64,
    /// One per item (`None`: no word of it is known to the model).
    pub vectors: Vec<Option<crate::semantic::Vector>>,
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
    /// redb panicked: the file is corrupt.
    #[error("the database is corrupt: {0}")]
    Corrupt(String),
    /// The database's path is not a regular file of this user's.
    #[error(transparent)]
    File(#[from] crate::safe_file::SafeFileError),
    /// The database could not be reopened after an I/O error.
    #[error("the database is closed after an I/O error and could not be reopened yet")]
    Closed,
}

impl StoreError {
    /// Whether the database must be reopened to be used again (redb
    /// refuses every operation after an I/O error).
    fn needs_reopen(&self) -> bool {
        matches!(
            self,
            StoreError::Db(redb::Error::PreviousIo | redb::Error::Io(_)) | StoreError::Closed
        )
    }
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
    path: PathBuf,
    /// `None` after an I/O error, until it can be reopened.
    db: RwLock<Option<Database>>,
}

/// Closing a database commits redb's allocator state, which panics on some
/// corrupt files: the close is caught like every other operation, so memd
/// still exits cleanly (the next start sets the file aside).
impl Drop for Store {
    fn drop(&mut self) {
        let db = match self.db.get_mut() {
            Ok(db) => db.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if catch_unwind(AssertUnwindSafe(move || drop(db))).is_err() {
            tracing::error!(
                "redb panicked closing {}: the file is corrupt",
                self.path.display()
            );
        }
    }
}

/// What opening found.
#[derive(Debug, Default)]
pub struct OpenReport {
    /// Why the database was rebuilt from scratch, if it was.
    pub rebuilt: Option<String>,
    /// Where a database that could not be used was set aside.
    pub set_aside: Option<PathBuf>,
    /// Learned records carried over from a database set aside.
    pub salvaged: u64,
    /// Stored records whose checksum failed (dropped; files re-parsed).
    pub unverified: u64,
}

/// The message of a caught panic.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// Runs `f`, turning a panic (redb's, on a corrupt file) into an error.
fn guarded<T>(f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|panic| Err(StoreError::Corrupt(panic_message(&*panic))))
}

fn create(path: &Path) -> Result<Database, StoreError> {
    guarded(|| {
        Ok(Database::builder()
            .set_cache_size(CACHE_BYTES)
            .create(path)?)
    })
}

impl Store {
    /// Opens (or creates) the database at `path`, private to the user
    /// (0600). Another daemon holding it is an error. A database that
    /// cannot be opened or read through, redb's errors and panics alike, is
    /// set aside and a fresh one created with the learned records of the
    /// old one that still verify; one of another schema version is rebuilt.
    pub fn open(path: &Path) -> Result<(Store, OpenReport), StoreError> {
        // redb opens the path as it is: a link planted there, or another
        // user's file, is refused first.
        crate::safe_file::check_own_file(path)?;
        let mut report = OpenReport::default();
        if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
            tracing::warn!(
                "the database {} is empty (zero length): starting a new one; anything learned before is gone",
                path.display()
            );
            report.rebuilt = Some("the database file was empty".into());
        }
        let (failure, kept) = match create(path) {
            Ok(db) => {
                let store = Store {
                    path: path.to_path_buf(),
                    db: RwLock::new(Some(db)),
                };
                let checked = store
                    .check_schema()
                    .and_then(|upgraded| Ok((upgraded, store.verify()?)));
                match checked {
                    Ok((upgraded, unverified)) => {
                        report.rebuilt = upgraded.or(report.rebuilt);
                        report.unverified = unverified;
                        restrict(path);
                        return Ok((store, report));
                    }
                    // What can still be read and verified is kept.
                    Err(err) => (err, store.run(|db| Ok(kept_records(db))).ok()),
                }
            }
            Err(StoreError::Db(redb::Error::DatabaseAlreadyOpen)) => {
                return Err(redb::Error::DatabaseAlreadyOpen.into())
            }
            Err(err) => (err, None),
        };
        report.rebuilt = Some(format!("the database cannot be used ({failure})"));
        report.set_aside = set_aside(path)?;
        // Not opened at all: read what can be read without writing to it.
        let kept = kept.unwrap_or_else(|| {
            let Some(aside) = &report.set_aside else {
                return Vec::new();
            };
            let read_only = guarded(|| {
                Ok(Database::builder()
                    .set_cache_size(CACHE_BYTES)
                    .open_read_only(aside)?)
            });
            match read_only {
                Ok(db) => kept_records(&db),
                Err(err) => {
                    tracing::warn!(
                        "nothing learned can be read back from {}: {err}",
                        aside.display()
                    );
                    Vec::new()
                }
            }
        });
        let store = Store {
            path: path.to_path_buf(),
            db: RwLock::new(Some(create(path)?)),
        };
        store.reset()?;
        report.salvaged = store.restore(&kept)?;
        restrict(path);
        Ok((store, report))
    }

    /// Runs `f` on the database. A panic inside redb becomes an error; after
    /// an I/O error (a full disk) the database is reopened and `f` tried
    /// once more.
    fn run<T>(
        &self,
        mut f: impl FnMut(&Database) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut reopened = false;
        loop {
            let result = {
                let db = self.db.read().unwrap_or_else(|e| e.into_inner());
                match db.as_ref() {
                    Some(db) => guarded(|| f(db)),
                    None => Err(StoreError::Closed),
                }
            };
            match result {
                Err(err) if err.needs_reopen() && !reopened => {
                    reopened = true;
                    self.reopen(&err)?;
                }
                other => return other,
            }
        }
    }

    /// Closes the database and opens it again (redb refuses every use after
    /// an I/O error until then).
    fn reopen(&self, why: &StoreError) -> Result<(), StoreError> {
        let mut db = self.db.write().unwrap_or_else(|e| e.into_inner());
        // The old handle must be gone before the file is opened again.
        drop(db.take());
        match create(&self.path) {
            Ok(fresh) => {
                tracing::warn!("reopened the database after an error ({why})");
                *db = Some(fresh);
                Ok(())
            }
            Err(err) => {
                tracing::warn!("cannot reopen the database yet: {err}");
                Err(err)
            }
        }
    }

    /// Checks the schema version: the current one is used as it is, the
    /// unsealed one is upgraded, anything else is emptied. Says why when
    /// stored state was dropped.
    fn check_schema(&self) -> Result<Option<String>, StoreError> {
        match self.schema_version()? {
            Some(SCHEMA_VERSION) => Ok(None),
            Some(UNSEALED_VERSION) => {
                self.upgrade_unsealed()?;
                Ok(None)
            }
            None => {
                self.reset()?;
                Ok(None)
            }
            Some(other) => {
                self.reset()?;
                Ok(Some(format!(
                    "schema version {other}, this build uses {SCHEMA_VERSION}"
                )))
            }
        }
    }

    fn schema_version(&self) -> Result<Option<u32>, StoreError> {
        self.run(|db| {
            let txn = db.begin_read()?;
            let table = match txn.open_table(META) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let Some(value) = table.get("schema")? else {
                return Ok(None);
            };
            // An unreadable version is another version: emptied.
            Ok(Some(
                postcard::from_bytes::<u32>(value.value()).unwrap_or(u32::MAX),
            ))
        })
    }

    /// Empties every table and writes the schema version.
    fn reset(&self) -> Result<(), StoreError> {
        self.run(|db| {
            let txn = db.begin_write()?;
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
        })
    }

    /// Seals every value of a database of the previous version in place;
    /// its file records are dropped (the files are re-parsed, and records
    /// now carry when they were read).
    fn upgrade_unsealed(&self) -> Result<(), StoreError> {
        self.run(|db| {
            let txn = db.begin_write()?;
            for def in KEPT_TABLES {
                let mut table = txn.open_table(def)?;
                let entries: Vec<(String, Vec<u8>)> = table
                    .iter()?
                    .filter_map(Result::ok)
                    .map(|(k, v)| (k.value().to_string(), v.value().to_vec()))
                    .collect();
                for (key, value) in entries {
                    table.insert(key.as_str(), seal_bytes(&key, &value).as_slice())?;
                }
            }
            txn.delete_table(FILES)?;
            txn.open_table(FILES)?;
            txn.delete_table(VECTORS)?;
            let mut meta = txn.open_table(META)?;
            let next = meta.get(JOURNAL_NEXT)?.map(|v| v.value().to_vec());
            if let Some(next) = next {
                meta.insert(JOURNAL_NEXT, seal_bytes(JOURNAL_NEXT, &next).as_slice())?;
            }
            meta.insert("schema", postcard::to_allocvec(&SCHEMA_VERSION)?.as_slice())?;
            drop(meta);
            txn.commit()?;
            tracing::info!("upgraded the database to schema version {SCHEMA_VERSION} (file records are re-parsed once)");
            Ok(())
        })
    }

    /// Reads every table through, checking each value's seal: redb's errors
    /// and panics on a corrupt file surface here, at start-up, rather than
    /// later. Returns how many values failed their checksum (each is
    /// dropped where it is read).
    fn verify(&self) -> Result<u64, StoreError> {
        self.run(|db| {
            let txn = db.begin_read()?;
            let mut failed = 0;
            for def in [FILES, VECTORS].into_iter().chain(KEPT_TABLES) {
                let table = match txn.open_table(def) {
                    Ok(t) => t,
                    Err(redb::TableError::TableDoesNotExist(_)) => continue,
                    Err(e) => return Err(e.into()),
                };
                for entry in table.iter()? {
                    let (key, value) = entry?;
                    if unseal(key.value(), value.value()).is_none() {
                        failed += 1;
                    }
                }
            }
            Ok(failed)
        })
    }

    /// Writes back records kept from a database set aside; how many.
    fn restore(&self, kept: &Kept) -> Result<u64, StoreError> {
        self.run(|db| {
            let txn = db.begin_write()?;
            let mut n = 0;
            for (def, records) in kept {
                let mut table = txn.open_table(*def)?;
                for (key, value) in records {
                    table.insert(key.as_str(), value.as_slice())?;
                    n += 1;
                }
            }
            txn.commit()?;
            Ok(n)
        })
    }

    /// Writes a change to learned state; returns once it is committed.
    pub fn write_learned(&self, write: &LearnedWrite<'_>) -> Result<(), StoreError> {
        self.run(|db| {
            let txn = db.begin_write()?;
            {
                let mut table = txn.open_table(TAG_RELEVANCE)?;
                for (item, tag, score) in &write.tag_scores {
                    let key = format!("{item}{KEY_SEP}{tag}");
                    table.insert(key.as_str(), seal(&key, score)?.as_slice())?;
                }
                for (item, tag) in &write.tag_scores_removed {
                    table.remove(format!("{item}{KEY_SEP}{tag}").as_str())?;
                }
                let mut table = txn.open_table(APPLICATIONS)?;
                for (item, applications) in &write.applications {
                    table.insert(*item, seal(item, applications)?.as_slice())?;
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
                        table.insert(key.as_str(), seal(&key, pin)?.as_slice())?;
                    }
                }
                let mut table = txn.open_table(MATCHES)?;
                for (item, subset, count) in &write.matches {
                    let key = format!("{item}{KEY_SEP}{subset}");
                    table.insert(key.as_str(), seal(&key, count)?.as_slice())?;
                }
                let mut table = txn.open_table(SESSIONS)?;
                for (id, audit) in &write.sessions {
                    table.insert(*id, seal(id, *audit)?.as_slice())?;
                }
                for id in &write.sessions_removed {
                    table.remove(*id)?;
                }
                let mut table = txn.open_table(CONTEXTS)?;
                for (context, sessions) in &write.contexts {
                    table.insert(*context, seal(context, sessions)?.as_slice())?;
                }
                let mut table = txn.open_table(JOURNAL)?;
                for (item, seq) in &write.journal_removed {
                    table.remove(journal_key(item, *seq).as_str())?;
                }
                if !write.journal.is_empty() {
                    let mut meta = txn.open_table(META)?;
                    let stored = meta
                        .get(JOURNAL_NEXT)?
                        .and_then(|v| open::<u64>(JOURNAL_NEXT, v.value()));
                    let mut next = match stored {
                        Some(next) => next,
                        // Lost (or never written): after every entry there is.
                        None => last_journal_seq(&table)?,
                    };
                    for (item, at, judgement) in &write.journal {
                        let seq = at.unwrap_or_else(|| {
                            next += 1;
                            next
                        });
                        let key = journal_key(item, seq);
                        table.insert(key.as_str(), seal(&key, *judgement)?.as_slice())?;
                    }
                    meta.insert(JOURNAL_NEXT, seal(JOURNAL_NEXT, &next)?.as_slice())?;
                }
            }
            txn.commit()?;
            Ok(())
        })
    }

    /// The judgements applied to `item`, in order, with their sequence
    /// numbers. Entries that do not verify or decode are skipped: the caller
    /// checks the journal against the scores before relying on it
    /// ([`crate::learning::Learned::replays_to_current`]).
    pub fn journal(&self, item: &str) -> Result<Vec<(u64, Judgement)>, StoreError> {
        self.run(|db| {
            let txn = db.begin_read()?;
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
                if let (Ok(seq), Some(judgement)) = (
                    seq.parse::<u64>(),
                    open::<Judgement>(key.value(), value.value()),
                ) {
                    out.push((seq, judgement));
                }
            }
            Ok(out)
        })
    }

    /// Everything learned, for the engine. Values that do not verify or
    /// decode are skipped.
    pub fn learned(&self) -> Result<crate::learning::Learned, StoreError> {
        self.run(|db| {
            let mut learned = crate::learning::Learned::default();
            let txn = db.begin_read()?;
            let split = |key: &str| {
                key.split_once(KEY_SEP)
                    .map(|(a, b)| (a.to_string(), b.to_string()))
            };
            for entry in txn.open_table(TAG_RELEVANCE)?.iter()? {
                let (key, value) = entry?;
                let score = unseal(key.value(), value.value()).and_then(decode_tag_score);
                if let (Some((item, tag)), Some(score)) = (split(key.value()), score) {
                    learned.scores_entry(&item).insert(tag.into(), score);
                }
            }
            for entry in txn.open_table(APPLICATIONS)?.iter()? {
                let (key, value) = entry?;
                if let Some(applications) = open(key.value(), value.value()) {
                    learned
                        .applications
                        .insert(key.value().to_string(), applications);
                }
            }
            for entry in txn.open_table(PINS)?.iter()? {
                let (key, value) = entry?;
                let item = key.value().split(KEY_SEP).next().unwrap_or_default();
                if let Some(pin) = open::<Pin>(key.value(), value.value()) {
                    // An automatic pin for every context is what pins were
                    // before they were scoped: it is not carried over.
                    if pin.manual || !pin.tags.is_empty() {
                        learned.pins_entry(item).push(pin);
                    }
                }
            }
            for entry in txn.open_table(CONTEXTS)?.iter()? {
                let (key, value) = entry?;
                if let Some(sessions) = open::<u64>(key.value(), value.value()) {
                    learned.set_context(key.value().to_string(), sessions);
                }
            }
            for entry in txn.open_table(MATCHES)?.iter()? {
                let (key, value) = entry?;
                if let (Some((item, subset)), Some(count)) =
                    (split(key.value()), open(key.value(), value.value()))
                {
                    learned
                        .matches
                        .entry(item)
                        .or_default()
                        .insert(subset, count);
                }
            }
            learned.recount_agreement();
            Ok(learned)
        })
    }

    /// Every audited session that verifies.
    pub fn sessions(&self) -> Result<Vec<(String, SessionAudit)>, StoreError> {
        self.run(|db| {
            let txn = db.begin_read()?;
            let mut out = Vec::new();
            for entry in txn.open_table(SESSIONS)?.iter()? {
                let (key, value) = entry?;
                if let Some(audit) = unseal(key.value(), value.value()).and_then(decode_audit) {
                    out.push((key.value().to_string(), audit));
                }
            }
            Ok(out)
        })
    }

    /// Calls `visit` with each stored file that verifies and decodes, one at
    /// a time (so start-up never holds every record at once); returns the
    /// keys of those that do not, so they are dropped and their files
    /// re-parsed.
    pub fn visit_files(
        &self,
        mut visit: impl FnMut(PathBuf, FileRecord, Option<FileVectors>),
    ) -> Result<Vec<PathBuf>, StoreError> {
        self.run(|db| {
            let txn = db.begin_read()?;
            let table = txn.open_table(FILES)?;
            let vectors = match txn.open_table(VECTORS) {
                Ok(t) => Some(t),
                Err(redb::TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(e.into()),
            };
            let mut bad = Vec::new();
            for entry in table.iter()? {
                let (key, value) = entry?;
                let path = PathBuf::from(key.value());
                match open::<FileRecord>(key.value(), value.value()) {
                    Some(record) => {
                        let stored = match &vectors {
                            Some(t) => t
                                .get(key.value())?
                                .and_then(|v| open::<FileVectors>(key.value(), v.value())),
                            None => None,
                        };
                        visit(path, record, stored)
                    }
                    None => bad.push(path),
                }
            }
            Ok(bad)
        })
    }

    /// Every stored file that decodes, and the paths of those that do not.
    pub fn files(&self) -> Result<StoredFiles, StoreError> {
        let mut good = Vec::new();
        let bad = self.visit_files(|path, record, _| good.push((path, record)))?;
        Ok((good, bad))
    }

    /// Writes and removes file records, with their items' vectors (none:
    /// any stored ones go), in one transaction.
    pub fn update_files(
        &self,
        put: &[(&Path, &FileRecord, Option<&FileVectors>)],
        remove: &[&Path],
    ) -> Result<(), StoreError> {
        if put.is_empty() && remove.is_empty() {
            return Ok(());
        }
        self.run(|db| {
            let txn = db.begin_write()?;
            {
                let mut table = txn.open_table(FILES)?;
                let mut vectors = txn.open_table(VECTORS)?;
                // Removals first: a path both dropped and re-read is kept.
                for path in remove {
                    table.remove(path.to_string_lossy().as_ref())?;
                    vectors.remove(path.to_string_lossy().as_ref())?;
                }
                for (path, record, stored) in put {
                    let key = path.to_string_lossy();
                    table.insert(key.as_ref(), seal(&key, *record)?.as_slice())?;
                    match stored {
                        Some(v) => {
                            vectors.insert(key.as_ref(), seal(&key, *v)?.as_slice())?;
                        }
                        None => {
                            vectors.remove(key.as_ref())?;
                        }
                    }
                }
            }
            txn.commit()?;
            Ok(())
        })
    }

    /// The registered projects.
    pub fn projects(&self) -> Result<Vec<PathBuf>, StoreError> {
        self.run(|db| {
            let txn = db.begin_read()?;
            let table = txn.open_table(PROJECTS)?;
            let mut out = Vec::new();
            for entry in table.iter()? {
                let (key, value) = entry?;
                if unseal(key.value(), value.value()).is_some() {
                    out.push(PathBuf::from(key.value()));
                }
            }
            Ok(out)
        })
    }

    /// Registers a project for good.
    pub fn add_project(&self, repo: &Path) -> Result<(), StoreError> {
        self.run(|db| {
            let txn = db.begin_write()?;
            let key = repo.to_string_lossy();
            txn.open_table(PROJECTS)?
                .insert(key.as_ref(), seal(&key, &())?.as_slice())?;
            txn.commit()?;
            Ok(())
        })
    }
}

/// Records read back from a database being set aside.
type Kept = Vec<(Table, Vec<(String, Vec<u8>)>)>;

/// The records of the kept tables (and the journal's next number) that can
/// still be read and verify, table by table: a corrupt table loses only
/// itself, and a panic inside redb only what it was reading.
fn kept_records(db: &impl ReadableDatabase) -> Kept {
    let mut kept = Vec::new();
    for def in KEPT_TABLES {
        let records = guarded(|| {
            let txn = db.begin_read()?;
            let table = txn.open_table(def)?;
            let mut good = Vec::new();
            for entry in table.iter()? {
                let Ok((key, value)) = entry else { continue };
                if unseal(key.value(), value.value()).is_some() {
                    good.push((key.value().to_string(), value.value().to_vec()));
                }
            }
            Ok(good)
        });
        match records {
            Ok(records) => kept.push((def, records)),
            Err(err) => tracing::warn!("a table of learned state cannot be read back: {err}"),
        }
    }
    let next = guarded(|| {
        let txn = db.begin_read()?;
        let meta = txn.open_table(META)?;
        Ok(meta.get(JOURNAL_NEXT)?.map(|v| v.value().to_vec()))
    });
    if let Ok(Some(next)) = next {
        if unseal(JOURNAL_NEXT, &next).is_some() {
            kept.push((META, vec![(JOURNAL_NEXT.to_string(), next)]));
        }
    }
    kept
}

/// The highest journal sequence number stored, 0 when there is none.
fn last_journal_seq(
    table: &redb::Table<'_, &'static str, &'static [u8]>,
) -> Result<u64, StoreError> {
    let mut last = 0;
    for entry in table.iter()? {
        let (key, _) = entry?;
        if let Some(seq) = key
            .value()
            .rsplit_once(KEY_SEP)
            .and_then(|(_, seq)| seq.parse::<u64>().ok())
        {
            last = last.max(seq);
        }
    }
    Ok(last)
}

/// Moves a database that cannot be used out of the way, keeping it for
/// inspection (and for what can be salvaged from it); where it went.
fn set_aside(path: &Path) -> Result<Option<PathBuf>, StoreError> {
    if !path.exists() {
        return Ok(None);
    }
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".broken-{}", crate::time::now()));
    let aside = PathBuf::from(aside);
    std::fs::rename(path, &aside)?;
    tracing::warn!("set the unusable database aside as {}", aside.display());
    Ok(Some(aside))
}

/// Makes the database file private to the user (0600).
fn restrict(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Err(err) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
        tracing::warn!("cannot make {} private: {err}", path.display());
    }
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
            read_at_ns: 9,
            project: None,
            kind: load.kind,
            items: load.items,
            errors: load.errors,
        }
    }

    #[test]
    fn tag_scores_of_earlier_layouts_are_read() {
        #[derive(Serialize)]
        struct BeforeHeld {
            score: f64,
            positive: u32,
            negative: u32,
        }
        #[derive(Serialize)]
        struct BeforeTrial {
            before: BeforeHeld,
            held: u32,
        }
        let before_held = BeforeHeld {
            score: -0.3,
            positive: 1,
            negative: 4,
        };
        let read = decode_tag_score(&postcard::to_allocvec(&before_held).unwrap()).unwrap();
        assert_eq!((read.score, read.negative, read.held), (-0.3, 4, 0));
        assert!(!read.trial);
        let before_trial = BeforeTrial {
            before: before_held,
            held: 7,
        };
        let read = decode_tag_score(&postcard::to_allocvec(&before_trial).unwrap()).unwrap();
        assert_eq!((read.positive, read.held, read.trial), (1, 7, false));
        // Read as the evaluator's verdicts: the score is its own level.
        assert_eq!(read.unit(), 1.0);
        assert!(read.verdicts > 0.8 && read.verdicts < 1.0, "five verdicts");
        #[derive(Serialize)]
        struct BeforeUnit {
            before: BeforeTrial,
            trial: bool,
        }
        let before_unit = BeforeUnit {
            before: before_trial,
            trial: true,
        };
        let read = decode_tag_score(&postcard::to_allocvec(&before_unit).unwrap()).unwrap();
        assert_eq!((read.held, read.trial, read.unit()), (7, true, 1.0));
        #[derive(Serialize)]
        struct BeforeBalance {
            before: BeforeUnit,
            weights: f64,
            verdicts: f64,
        }
        let before_balance = BeforeBalance {
            before: before_unit,
            weights: 1.4,
            verdicts: 0.9,
        };
        let read = decode_tag_score(&postcard::to_allocvec(&before_balance).unwrap()).unwrap();
        // Read as owing nothing: a trial is confirmed by its next relevant
        // verdict, as it was when it was stored.
        assert_eq!((read.trial, read.weights, read.balance), (true, 1.4, 0));
        let now = TagScore {
            balance: -2,
            ..read
        };
        assert_eq!(
            decode_tag_score(&postcard::to_allocvec(&now).unwrap()),
            Some(now)
        );
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
        // A pending session of one item, at `updated_at`.
        let one = |updated_at| Old {
            shown: &["P-1"],
            tags: &[],
            repo: None,
            transcript: None,
            ended: false,
            evaluated_bytes: 0,
            processed: false,
            updated_at,
        };
        // The layout with `judged` but no prompt marks.
        #[derive(Serialize)]
        struct WithJudged<'a> {
            old: Old<'a>,
            judged: u32,
        }
        let with_judged = postcard::to_allocvec(&WithJudged {
            old: one(3),
            judged: 1,
        })
        .unwrap();
        let read = decode_audit(&with_judged).unwrap();
        assert_eq!((read.judged, read.updated_at), (1, 3));
        assert!(read.shown_on.is_empty());
        // The layout with prompt marks but no weak matches.
        #[derive(Serialize)]
        struct WithShownOn<'a> {
            before: WithJudged<'a>,
            shown_on: std::collections::BTreeMap<String, u64>,
        }
        let with_marks = postcard::to_allocvec(&WithShownOn {
            before: WithJudged {
                old: one(4),
                judged: 1,
            },
            shown_on: [("P-1".to_string(), 7)].into(),
        })
        .unwrap();
        let read = decode_audit(&with_marks).unwrap();
        assert_eq!((read.judged, read.updated_at), (1, 4));
        assert_eq!(read.shown_on.get("P-1"), Some(&7));
        assert!(read.weak.is_empty());
        // And the current layout round-trips as itself.
        let now = SessionAudit {
            judged: 1,
            shown_on: [("P-1".to_string(), 7)].into(),
            weak: vec!["P-1".to_string()],
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
                .update_files(&[(Path::new("/k/g.yaml"), &record(), None)], &[])
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
                .update_files(&[(Path::new("/k/g.yaml"), &record(), None)], &[])
                .unwrap();
            store
                .run(|db| {
                    let txn = db.begin_write()?;
                    txn.open_table(META)?
                        .insert("schema", postcard::to_allocvec(&999u32)?.as_slice())?;
                    txn.commit()?;
                    Ok(())
                })
                .unwrap();
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

    /// Flips one bit of the first stored copy of `needle` in the file.
    fn flip_in_file(path: &Path, needle: &[u8]) -> usize {
        let mut bytes = std::fs::read(path).unwrap();
        let mut flipped = 0;
        let mut at = 0;
        while let Some(i) = bytes[at..].windows(needle.len()).position(|w| w == needle) {
            bytes[at + i + 2] ^= 0x01;
            flipped += 1;
            at += i + needle.len();
        }
        std::fs::write(path, bytes).unwrap();
        flipped
    }

    #[test]
    fn a_flipped_bit_is_caught_by_the_records_checksum() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memd.redb");
        {
            let (store, _) = Store::open(&path).unwrap();
            store
                .update_files(&[(Path::new("/k/g.yaml"), &record(), None)], &[])
                .unwrap();
            let audit = SessionAudit {
                shown: vec!["SESSION-ITEM-1".into()],
                ..SessionAudit::default()
            };
            store
                .write_learned(&LearnedWrite {
                    sessions: vec![("s-1", &audit)],
                    ..LearnedWrite::default()
                })
                .unwrap();
        }
        // The gotcha's fix `f` is too short to find: flip its id instead,
        // and the session's shown item.
        assert!(flip_in_file(&path, b"G-1") > 0);
        assert!(flip_in_file(&path, b"SESSION-ITEM-1") > 0);
        let (store, report) = Store::open(&path).unwrap();
        assert!(report.rebuilt.is_none(), "{report:?}");
        assert_eq!(report.unverified, 2);
        let (files, bad) = store.files().unwrap();
        assert!(files.is_empty(), "a garbled record is never served");
        assert_eq!(bad, [PathBuf::from("/k/g.yaml")]);
        assert!(store.sessions().unwrap().is_empty());
    }

    #[test]
    fn a_database_of_the_unsealed_version_is_upgraded_keeping_what_was_learned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memd.redb");
        {
            let db = Database::create(&path).unwrap();
            let txn = db.begin_write().unwrap();
            txn.open_table(META)
                .unwrap()
                .insert(
                    "schema",
                    postcard::to_allocvec(&UNSEALED_VERSION).unwrap().as_slice(),
                )
                .unwrap();
            let audit = SessionAudit {
                shown: vec!["P-1".into()],
                ..SessionAudit::default()
            };
            txn.open_table(SESSIONS)
                .unwrap()
                .insert("s-1", postcard::to_allocvec(&audit).unwrap().as_slice())
                .unwrap();
            txn.open_table(PROJECTS)
                .unwrap()
                .insert("/src/app", [].as_slice())
                .unwrap();
            txn.open_table(FILES)
                .unwrap()
                .insert("/k/g.yaml", postcard::to_allocvec(&7u8).unwrap().as_slice())
                .unwrap();
            txn.commit().unwrap();
        }
        let (store, report) = Store::open(&path).unwrap();
        assert!(report.rebuilt.is_none(), "{report:?}");
        assert_eq!(report.unverified, 0);
        let sessions = store.sessions().unwrap();
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].1.shown, ["P-1"]);
        assert_eq!(store.projects().unwrap(), [PathBuf::from("/src/app")]);
        let (files, bad) = store.files().unwrap();
        assert!(
            files.is_empty() && bad.is_empty(),
            "file records are re-parsed"
        );
    }

    #[test]
    fn the_database_is_private_and_an_empty_one_is_reported() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memd.redb");
        std::fs::write(&path, b"").unwrap();
        let (_store, report) = Store::open(&path).unwrap();
        assert!(report.rebuilt.unwrap().contains("empty"));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

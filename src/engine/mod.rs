//! The in-memory knowledge base: every loaded file, the live items, the text
//! index over them, and the query entry point.
//!
//! Changing one file costs in proportion to that file: its old items leave
//! the index and its new ones enter, nothing else is touched. An id defined
//! twice in the same scope is served from the first definition, the second
//! is reported with both places, and takes over if the first goes away.
//!
//! Every file has a scope: [`GLOBAL`] (the configured roots, seen by every
//! query) or a project (a repository's `.claude/memory` or `.memd`, seen
//! only by queries from inside that repository). A project item whose id is
//! also a global one is reported and the global one is served.
//!
//! - `select`: each kind's selection under its seed's rules, then (with
//!   `[query] decide`) the one decision across kinds on a prompt.
//! - [`relevance`]: the estimate that decision reads, and its constants.
//! - `explain`: why an item is or is not shown.
//! - `features`: what the scorers need of an item, computed once.

mod explain;
mod features;
pub mod relevance;
mod select;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashSet};

use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{Config, Role};
use crate::knowledge::scan::knowledge_files;
use crate::knowledge::{load_file, Body, Diagnostic, FileKind, FileLoad, Item};
use crate::protocol::{Answer, Explanation, Kind, Query, SearchHit};
use crate::semantic::{Model, Semantic, Vector};
use crate::text::{DocId, Field, Similarities, TextIndex};

use crate::learning::{Learned, Match};

/// Which queries see a file's items: [`GLOBAL`], or a registered project.
pub type ScopeId = u32;
/// The scope of the configured roots: every query sees it.
pub const GLOBAL: ScopeId = 0;

/// Why a query could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The `now` field is not an instant.
    #[error("invalid `now`: {0}")]
    BadNow(String),
}

/// A loaded file as the engine keeps it.
#[derive(Debug, Clone)]
pub struct FileState {
    /// What the file holds.
    pub kind: FileKind,
    /// Its items (including any that lost an id clash).
    pub items: Vec<Arc<Item>>,
    /// Its problems.
    pub errors: Vec<Diagnostic>,
    /// True when the latest version failed to parse and `items` are the
    /// last good ones.
    pub stale: bool,
    /// Who sees its items.
    pub scope: ScopeId,
}

/// A live item: the owner of its id.
pub(crate) struct Live {
    pub item: Arc<Item>,
    pub doc: DocId,
    pub kind: Kind,
    pub scope: ScopeId,
    /// A project's item whose id a global item claims too: a query sees
    /// the global one ([`Engine::visible`]). Kept up to date as global
    /// items come and go (`Engine::shadow`), so a prompt that matches
    /// thousands of a project's items does not look each one's id up.
    pub shadowed: bool,
    /// What the scorer needs of the item, computed once.
    pub features: features::Features,
}

/// An item's id as the engine keys it: held inline up to 24 bytes (most
/// ids), so looking one up allocates nothing and compares it without
/// following a pointer. A project's item is checked against the global
/// ids for each prompt that matches it, and a session start looks up each
/// lesson learning pinned.
type Id = crate::learning::state::Key;

/// Where an item claiming an id is: its file and its index there.
type Claim = (Arc<Path>, usize);

/// An id's live slot and every item claiming it: the owner, then any
/// duplicates in claim order (usually none, so no allocation).
struct IdEntry {
    slot: u32,
    owner: Claim,
    // A thin pointer: ids almost never have duplicates, and this entry
    // exists for every item.
    #[allow(clippy::box_collection)]
    duplicates: Option<Box<Vec<Claim>>>,
}

/// Counts for status and reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Files loaded (any kind but ignored).
    pub files: usize,
    /// Files ignored.
    pub ignored: usize,
    /// Live items per kind.
    pub items: BTreeMap<Kind, usize>,
}

/// An answer, with what the daemon learns from besides the items shown.
#[derive(Debug, Clone)]
pub struct Answered {
    pub answer: Answer,
    /// The lessons that matched the prompt well (a task band of
    /// `lesson::PROBATION_MIN_TASK_POINTS` or more) but were held back,
    /// filtered by learned evidence.
    pub held_back: Vec<String>,
    /// The lessons chosen on a prompt they matched only in passing
    /// ([`Match::Weak`]).
    pub weak: Vec<String>,
}

/// The knowledge base and its query engine.
#[derive(Default)]
pub struct Engine {
    files: BTreeMap<Arc<Path>, FileState>,
    slots: Vec<Option<Live>>,
    free: Vec<u32>,
    /// Each id in each scope: the slot of its live item and its claimants,
    /// in claim order (the first owns it).
    ids: FxHashMap<(ScopeId, Id), IdEntry>,
    /// Registered projects: scope `n` is `projects[n - 1]`.
    projects: Vec<PathBuf>,
    /// The slot of each live text-index document (`u32::MAX`: none).
    doc_slots: Vec<u32>,
    pub(crate) index: TextIndex,
    /// The semantic tier, when a model is loaded.
    semantic: Option<Semantic>,
    pub(crate) roles: BTreeMap<String, Role>,
    /// Whether the prompt hook's block is one decision across kinds
    /// (`[query] decide`).
    pub(crate) decide: bool,
    /// Live items per kind (by `Kind as usize`), so a query passes over a
    /// kind the knowledge does not have.
    live_per_kind: [u32; 9],
    /// The slots of the lessons pinned in their files: with those learning
    /// pinned, all a session start reads of the lessons
    /// ([`Engine::pinned_lessons`]), without a pass over every item.
    pinned_lessons: BTreeSet<u32>,
}

// `Engine::live_per_kind` has a place for every kind.
const _: () = {
    let mut i = 0;
    while i < Kind::ALL.len() {
        assert!((Kind::ALL[i] as usize) < 9);
        i += 1;
    }
};

impl Engine {
    /// An empty engine with the config's roles and query settings.
    pub fn new(config: &Config) -> Self {
        Engine {
            roles: config.roles.clone(),
            decide: config.query.decide,
            ..Engine::default()
        }
    }

    /// Whether the decision to show decides `query`'s block: a prompt (a
    /// task the items must be about) with `[query] decide` on.
    pub(crate) fn decides(&self, query: &Query) -> bool {
        self.decide && query.task_match && !query.task.trim().is_empty()
    }

    /// Whether any item of `kind` is live (in any scope).
    pub(crate) fn has(&self, kind: Kind) -> bool {
        self.live_per_kind[kind as usize] > 0
    }

    /// Live items of `kind`.
    pub(crate) fn live_count(&self, kind: Kind) -> usize {
        self.live_per_kind[kind as usize] as usize
    }

    /// Turns the decision to show on prompts on or off.
    pub fn set_decide(&mut self, on: bool) {
        self.decide = on;
    }

    /// Loads every knowledge file under `roots` into the global scope.
    pub fn load_roots(&mut self, roots: &[PathBuf]) {
        for root in roots {
            for path in knowledge_files(root) {
                self.apply(load_file(&path));
            }
        }
    }

    /// Turns the semantic tier on with `model` (every live item is
    /// embedded), or off with `None`.
    pub fn set_model(&mut self, model: Option<Arc<Model>>) {
        self.semantic = model.map(Semantic::new);
        if let Some(semantic) = &mut self.semantic {
            for live in self.slots.iter().flatten() {
                let vector = embed(semantic.model(), &live.item);
                semantic.set(live.doc, vector.as_ref());
            }
        }
    }

    /// The semantic tier, when on.
    pub fn semantic(&self) -> Option<&Semantic> {
        self.semantic.as_ref()
    }

    /// The semantic tier, to fuse differently (the relevance benchmark).
    pub fn semantic_mut(&mut self) -> Option<&mut Semantic> {
        self.semantic.as_mut()
    }

    /// The vectors of `items` by the loaded model (`None` when the tier is
    /// off): what [`Engine::apply_embedded`] takes back, to store them.
    pub fn embed_items<'a>(
        &self,
        items: impl IntoIterator<Item = &'a Item>,
    ) -> Option<Vec<Option<Vector>>> {
        let semantic = self.semantic.as_ref()?;
        Some(
            items
                .into_iter()
                .map(|item| embed(semantic.model(), item))
                .collect(),
        )
    }

    /// The similarity of every document to `text`: lexical, fused with the
    /// cosine when the semantic tier is on.
    pub(crate) fn similarities(&self, text: &str) -> Similarities {
        let parallel = !text.trim().is_empty()
            && self
                .semantic
                .as_ref()
                .is_some_and(|s| s.vectors() >= PARALLEL_FROM);
        self.similarities_on(text, parallel)
    }

    /// [`Engine::similarities`], the cosines on a second thread when
    /// `parallel`.
    fn similarities_on(&self, text: &str, parallel: bool) -> Similarities {
        let Some(semantic) = &self.semantic else {
            return self.index.similarities(text);
        };
        // The two passes are independent: on a large index, the cosines
        // are computed on a second core while the postings are read.
        if !parallel {
            let lexical = self.index.similarities(text);
            return semantic.fuse(text, lexical);
        }
        let (lexical, cosines) = std::thread::scope(|scope| {
            let cosines = scope.spawn(|| semantic.cosines(text));
            let lexical = self.index.similarities(text);
            (lexical, cosines.join())
        });
        match cosines {
            Ok(cosines) => semantic.fuse_cosines(lexical, cosines),
            // The pass panicked: the same pass again, here.
            Err(_) => semantic.fuse(text, lexical),
        }
    }

    /// Releases spare capacity after a bulk load.
    pub fn shrink_to_fit(&mut self) {
        self.index.shrink_to_fit();
        if let Some(semantic) = &mut self.semantic {
            semantic.shrink_to_fit();
        }
        self.slots.shrink_to_fit();
        self.doc_slots.shrink_to_fit();
        self.ids.shrink_to_fit();
    }

    /// Registers a project (a repository's path) and returns its scope;
    /// registering it again returns the same scope.
    pub fn register_project(&mut self, repo: &Path) -> ScopeId {
        match self.projects.iter().position(|p| p == repo) {
            Some(i) => (i + 1) as ScopeId,
            None => {
                self.projects.push(repo.to_path_buf());
                self.projects.len() as ScopeId
            }
        }
    }

    /// The registered projects, in scope order.
    pub fn projects(&self) -> &[PathBuf] {
        &self.projects
    }

    /// The scope a query runs in: the registered project containing its
    /// `repo` (when a path) or else its `cwd`; [`GLOBAL`] outside any.
    pub fn scope_of(&self, query: &Query) -> ScopeId {
        let Some(place) = query.place().map(Path::new) else {
            return GLOBAL;
        };
        self.projects
            .iter()
            .enumerate()
            .filter(|(_, p)| place.starts_with(p))
            .max_by_key(|(_, p)| p.as_os_str().len())
            .map_or(GLOBAL, |(i, _)| (i + 1) as ScopeId)
    }

    /// Applies a file's new contents in the global scope.
    pub fn apply(&mut self, load: FileLoad) {
        self.apply_scoped(load, GLOBAL);
    }

    /// Applies a file's new contents. A file that failed to parse keeps its
    /// last good items live and reports the error.
    pub fn apply_scoped(&mut self, load: FileLoad, scope: ScopeId) {
        self.apply_embedded(load, scope, None);
    }

    /// [`Engine::apply_scoped`] with its items' vectors already made (by
    /// [`Engine::embed_items`], now or before a restart), in item order;
    /// items without one are embedded.
    pub fn apply_embedded(
        &mut self,
        load: FileLoad,
        scope: ScopeId,
        vectors: Option<Vec<Option<Vector>>>,
    ) {
        let path = load.path.clone();
        if load.failed() {
            if let Some(state) = self.files.get_mut(&path) {
                if !state.items.is_empty() {
                    state.errors = load.errors;
                    state.stale = true;
                    return;
                }
            }
        }
        self.release_file(&path);
        // Not `collect()`: that would reuse the parsed items' buffer in
        // place, keeping room for `size_of::<Item>() / 8` times as many
        // pointers for as long as the file is loaded (16 MiB at 100k items).
        let mut items: Vec<Arc<Item>> = Vec::with_capacity(load.items.len());
        items.extend(load.items.into_iter().map(Arc::new));
        let mut vectors = vectors
            .filter(|v| v.len() == items.len())
            .map(Vec::into_iter);
        for (i, item) in items.iter().enumerate() {
            let vector = vectors.as_mut().map(|v| v.next().flatten());
            self.claim(item, &path, i, scope, vector);
        }
        self.files.insert(
            path,
            FileState {
                kind: load.kind,
                items,
                errors: load.errors,
                stale: false,
                scope,
            },
        );
    }

    /// Forgets a file and its items.
    pub fn remove_file(&mut self, path: &Path) {
        self.release_file(path);
        self.files.remove(path);
    }

    fn release_file(&mut self, path: &Path) {
        let Some(state) = self.files.get(path) else {
            return;
        };
        let scope = state.scope;
        let ids: Vec<String> = state.items.iter().map(|i| i.id.clone()).collect();
        for id in ids {
            self.release(scope, id, path);
        }
    }

    /// Makes `item` live unless its id is taken; `vector` is its embedding
    /// when already made (`Some(None)`: it has none).
    fn claim(
        &mut self,
        item: &Arc<Item>,
        path: &Arc<Path>,
        index: usize,
        scope: ScopeId,
        vector: Option<Option<Vector>>,
    ) {
        let key = (scope, Id::from(item.id.as_str()));
        if let Some(entry) = self.ids.get_mut(&key) {
            entry
                .duplicates
                .get_or_insert_with(Box::default)
                .push((path.clone(), index));
            return;
        }
        let slot = self.make_live(item.clone(), scope, vector);
        self.ids.insert(
            key,
            IdEntry {
                slot,
                owner: (path.clone(), index),
                duplicates: None,
            },
        );
        if scope == GLOBAL {
            self.shadow(&item.id, true);
        }
    }

    /// Marks every project's item with `id` as `shadowed` by a global one,
    /// or no longer.
    fn shadow(&mut self, id: &str, shadowed: bool) {
        let mut key = (GLOBAL, Id::from(id));
        for scope in 1..=self.projects.len() as ScopeId {
            key.0 = scope;
            let Some(entry) = self.ids.get(&key) else {
                continue;
            };
            if let Some(live) = self.slots[entry.slot as usize].as_mut() {
                live.shadowed = shadowed;
            }
        }
    }

    fn release(&mut self, scope: ScopeId, id: String, path: &Path) {
        let key = (scope, Id::from(id));
        let Some(entry) = self.ids.get_mut(&key) else {
            return;
        };
        if let Some(duplicates) = entry.duplicates.as_mut() {
            duplicates.retain(|(p, _)| &**p != path);
        }
        if &*entry.owner.0 != path {
            return;
        }
        let slot = entry.slot;
        let next = match entry.duplicates.as_mut() {
            Some(duplicates) if !duplicates.is_empty() => Some(duplicates.remove(0)),
            _ => None,
        };
        if let Some(live) = self.slots[slot as usize].take() {
            self.live_per_kind[live.kind as usize] -= 1;
            self.pinned_lessons.remove(&slot);
            let fields = text_fields(&live.item);
            self.index.remove(live.doc, &borrow_fields(&fields));
            self.doc_slots[live.doc as usize] = u32::MAX;
            if let Some(semantic) = &mut self.semantic {
                semantic.set(live.doc, None);
            }
        }
        self.free.push(slot);
        let next_item = next
            .as_ref()
            .and_then(|(p, i)| self.files.get(p).and_then(|f| f.items.get(*i)).cloned());
        match next_item {
            Some(item) => {
                let slot = self.make_live(item, scope, None);
                if let (Some(entry), Some(next)) = (self.ids.get_mut(&key), next) {
                    entry.slot = slot;
                    entry.owner = next;
                }
            }
            None => {
                self.ids.remove(&key);
                if scope == GLOBAL {
                    self.shadow(&key.1, false);
                }
            }
        }
    }

    fn make_live(
        &mut self,
        item: Arc<Item>,
        scope: ScopeId,
        vector: Option<Option<Vector>>,
    ) -> u32 {
        let fields = text_fields(&item);
        let doc = self.index.add(&borrow_fields(&fields));
        if let Some(semantic) = &mut self.semantic {
            let vector = match vector {
                Some(stored) if is_embedded(item.kind()) => stored,
                _ => embed(semantic.model(), &item),
            };
            semantic.set(doc, vector.as_ref());
        }
        let features = features::Features::of(&item, &self.index);
        let pinned = matches!(features, features::Features::Lesson { pinned: true, .. });
        let kind = item.kind();
        self.live_per_kind[kind as usize] += 1;
        let shadowed =
            scope != GLOBAL && self.ids.contains_key(&(GLOBAL, Id::from(item.id.as_str())));
        let live = Live {
            item,
            doc,
            kind,
            scope,
            shadowed,
            features,
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(live);
                slot
            }
            None => {
                self.slots.push(Some(live));
                (self.slots.len() - 1) as u32
            }
        };
        let doc = doc as usize;
        if self.doc_slots.len() <= doc {
            self.doc_slots.resize(doc + 1, u32::MAX);
        }
        self.doc_slots[doc] = slot;
        if pinned {
            self.pinned_lessons.insert(slot);
        }
        slot
    }

    /// The live items.
    pub(crate) fn live_items(&self) -> impl Iterator<Item = &Live> {
        self.slots.iter().flatten()
    }

    /// The live items `sims` matched that `keep_doc` keeps by their
    /// document and `keep` by themselves, each once, in the order
    /// [`Engine::live_items`] gives them.
    pub(crate) fn matched_in_order(
        &self,
        sims: &Similarities,
        keep_doc: impl Fn(DocId) -> bool,
        keep: impl Fn(&Live) -> bool,
    ) -> Vec<&Live> {
        // The matched slots as bits, read in order: a pass over one word
        // in 64 slots costs less than sorting thousands of matches.
        let mut slots = vec![0u64; self.slots.len().div_ceil(64)];
        let mut count = 0;
        for &doc in sims.matched() {
            let Some(&slot) = self.doc_slots.get(doc as usize) else {
                continue;
            };
            if let Some(word) = slots.get_mut(slot as usize / 64) {
                if keep_doc(doc) {
                    *word |= 1 << (slot % 64);
                    count += 1;
                }
            }
        }
        let mut kept = Vec::with_capacity(count);
        for (i, &word) in slots.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let slot = i * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                if let Some(live) = self
                    .slots
                    .get(slot)
                    .and_then(Option::as_ref)
                    .filter(|live| keep(live))
                {
                    kept.push(live);
                }
            }
        }
        kept
    }

    /// The lessons a session start in `scope` reads: those pinned in their
    /// files and those `learned` names (the ids of automatic pins), each
    /// as a query in `scope` sees it, in the order of
    /// [`Engine::live_items`]: a pass over every item read them all to
    /// find these few (at 10k lessons, warm, 43% of a session start's
    /// time; BENCHMARKS.md).
    pub(crate) fn pinned_lessons<'s>(
        &self,
        learned: impl Iterator<Item = &'s str>,
        scope: ScopeId,
    ) -> Vec<&Live> {
        let mut slots: Vec<u32> = self
            .pinned_lessons
            .iter()
            .copied()
            .chain(learned.filter_map(|id| self.slot_in(id, scope)))
            .collect();
        slots.sort_unstable();
        slots.dedup();
        slots
            .into_iter()
            .filter_map(|slot| self.slots.get(slot as usize)?.as_ref())
            .filter(|live| {
                live.kind == Kind::Lesson && (live.scope == GLOBAL || self.visible(live, scope))
            })
            .collect()
    }

    /// The live item of a text-index document.
    pub(crate) fn live_by_doc(&self, doc: DocId) -> Option<&Live> {
        let slot = *self.doc_slots.get(doc as usize)?;
        self.slots.get(slot as usize)?.as_ref()
    }

    /// The live global item with this id.
    pub fn get(&self, id: &str) -> Option<&Arc<Item>> {
        self.get_in(id, GLOBAL)
    }

    /// The tags the author gave the item `id` ([`Item::own_tags`]), in
    /// whichever scope it lives ([`Engine::get_anywhere`]); none when it is
    /// not live.
    pub fn own_tags(&self, id: &str) -> Vec<String> {
        self.get_anywhere(id)
            .map(|i| i.own_tags())
            .unwrap_or_default()
    }

    /// The live item `id` of any scope: the global one, else the first
    /// registered project's that has it. For what learning and the page
    /// know by id alone (a verdict, a log entry), which no query scopes.
    pub fn get_anywhere(&self, id: &str) -> Option<&Arc<Item>> {
        self.get(id).or_else(|| {
            (1..=self.projects.len() as ScopeId).find_map(|scope| self.get_in(id, scope))
        })
    }

    /// The live item with this id as a query in `scope` sees it: the
    /// global one, else the project's own.
    pub fn get_in(&self, id: &str, scope: ScopeId) -> Option<&Arc<Item>> {
        self.live_in(id, scope).map(|l| &l.item)
    }

    /// Whether an item claims `id` where a new item of `scope` would be
    /// seen: in the project `scope` or globally; for a global item, in any
    /// scope (a global item is seen from every project).
    pub fn id_taken(&self, id: &str, scope: ScopeId) -> bool {
        if scope == GLOBAL {
            self.ids.keys().any(|(_, claimed)| claimed == id)
        } else {
            let id = Id::from(id);
            self.ids.contains_key(&(GLOBAL, id.clone())) || self.ids.contains_key(&(scope, id))
        }
    }

    /// The live entry behind [`Engine::get_in`].
    pub(crate) fn live_in(&self, id: &str, scope: ScopeId) -> Option<&Live> {
        self.slots[self.slot_in(id, scope)? as usize].as_ref()
    }

    /// The slot of the live item [`Engine::live_in`] gives.
    fn slot_in(&self, id: &str, scope: ScopeId) -> Option<u32> {
        let key = (GLOBAL, Id::from(id));
        match self.ids.get(&key) {
            Some(entry) => Some(entry.slot),
            None if scope != GLOBAL => Some(self.ids.get(&(scope, key.1))?.slot),
            None => None,
        }
    }

    /// Whether `live` is visible to a query in `scope`: global items always;
    /// a project's own items, unless a global item has the same id.
    pub(crate) fn visible(&self, live: &Live, scope: ScopeId) -> bool {
        live.scope == GLOBAL || (live.scope == scope && !live.shadowed)
    }

    /// Every file the engine knows, by path.
    pub fn files(&self) -> &BTreeMap<Arc<Path>, FileState> {
        &self.files
    }

    /// Every problem: each file's own, and every id defined twice.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = self
            .files
            .values()
            .flat_map(|f| f.errors.iter().cloned())
            .collect();
        for ((scope, id), entry) in &self.ids {
            let (owner_path, owner_index) = &entry.owner;
            let Some(owner) = self
                .files
                .get(owner_path)
                .and_then(|f| f.items.get(*owner_index))
            else {
                continue;
            };
            for (path, index) in entry.duplicates.iter().flat_map(|d| d.iter()) {
                if let Some(dup) = self.files.get(path).and_then(|f| f.items.get(*index)) {
                    out.push(Diagnostic {
                        file: dup.source.file.clone(),
                        pos: dup.source.pos,
                        message: format!(
                            "duplicate id `{id}`: already defined at {}:{}",
                            owner.source.file.display(),
                            owner.source.pos
                        ),
                    });
                }
            }
            // A project item clashing with a global one.
            if *scope != GLOBAL {
                let global = self
                    .ids
                    .get(&(GLOBAL, id.clone()))
                    .map(|e| &e.owner)
                    .and_then(|(p, i)| self.files.get(p)?.items.get(*i));
                if let Some(global) = global {
                    out.push(Diagnostic {
                        file: owner.source.file.clone(),
                        pos: owner.source.pos,
                        message: format!(
                            "duplicate id `{id}`: already defined at {}:{} (global, which is served)",
                            global.source.file.display(),
                            global.source.pos
                        ),
                    });
                }
            }
        }
        out.sort_by(|a, b| (&a.file, a.pos.line, a.pos.col).cmp(&(&b.file, b.pos.line, b.pos.col)));
        out
    }

    /// Files and live items per kind.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for state in self.files.values() {
            match state.kind {
                FileKind::Ignored(_) => counts.ignored += 1,
                _ => counts.files += 1,
            }
        }
        for live in self.live_items() {
            *counts.items.entry(live.kind).or_default() += 1;
        }
        counts
    }

    /// Answers a query with what was `learned`: select per kind, then
    /// render within budget.
    pub fn query(&self, learned: &Learned, query: &Query) -> Result<Answer, QueryError> {
        self.query_excluding(learned, query, &HashSet::new())
    }

    /// Answers a query leaving out the items in `exclude` (those a session
    /// has already been shown): the next best take their places.
    pub fn query_excluding(
        &self,
        learned: &Learned,
        query: &Query,
        exclude: &HashSet<String>,
    ) -> Result<Answer, QueryError> {
        Ok(self.answer(learned, query, exclude)?.answer)
    }

    /// [`Engine::query_excluding`], with the lessons held back from the
    /// prompt by what was learned (for the daemon to age that evidence).
    pub fn answer(
        &self,
        learned: &Learned,
        query: &Query,
        exclude: &HashSet<String>,
    ) -> Result<Answered, QueryError> {
        let query = &*bounded(query);
        let now = query_now(query)?;
        let selection = select::select(self, learned, query, now, exclude);
        Ok(Answered {
            answer: crate::render::render(selection.entries, query.budget_chars as usize),
            held_back: selection.lessons.held_back,
            weak: selection.lessons.weak,
        })
    }

    /// Items whose text matches `text`, best first, as a query in `scope`
    /// sees them.
    pub fn search(&self, text: &str, limit: usize, scope: ScopeId) -> Vec<SearchHit> {
        let sims = self.similarities(&crate::text::considered(text));
        self.ranked(&sims, limit, scope, |_| true)
            .into_iter()
            .map(|(sim, live)| SearchHit {
                id: live.item.id.clone(),
                kind: live.kind,
                similarity: f64::from(sim),
                title: crate::knowledge::view::title(&live.item),
                source: live.item.source.to_string(),
            })
            .collect()
    }

    /// The decision's view of a prompt: the `limit` items of the kinds
    /// scored on the task (patterns, anti-patterns, gotchas, lessons) most
    /// similar to `text`, best first, each with its evidence and estimate
    /// ([`relevance`]). What the bench fits and measures the model on.
    pub fn candidates(&self, text: &str, limit: usize, scope: ScopeId) -> Vec<Candidate> {
        let text = crate::text::considered(text);
        let sims = self.similarities(&text);
        select::decision::Candidates::top(self, &text, &sims, scope, limit)
            .best()
            .iter()
            .map(|&(live, evidence, probability)| Candidate {
                id: live.item.id.clone(),
                kind: live.kind,
                evidence,
                probability,
            })
            .collect()
    }

    /// The `limit` items visible in `scope` and kept by `keep` most similar
    /// by `sims`, best first (the earlier id on a tie).
    fn ranked<'a>(
        &'a self,
        sims: &Similarities,
        limit: usize,
        scope: ScopeId,
        keep: impl Fn(&Live) -> bool,
    ) -> Vec<(f32, &'a Live)> {
        let mut hits: Vec<(f32, &Live)> = sims
            .matched()
            .iter()
            .filter_map(|&doc| self.live_by_doc(doc))
            .filter(|live| keep(live) && self.visible(live, scope))
            .map(|live| (sims.get(live.doc), live))
            .collect();
        // A total order (similarity, then id): the best `limit` chosen,
        // then only those sorted.
        let order = |a: &(f32, &Live), b: &(f32, &Live)| {
            b.0.total_cmp(&a.0)
                .then_with(|| a.1.item.id.cmp(&b.1.item.id))
        };
        if limit == 0 {
            return Vec::new();
        }
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_by(order);
        hits
    }

    /// What the decision to show needs of a prompt, computed once.
    pub(crate) fn decision<'a>(&'a self, text: &str, sims: &'a Similarities) -> Decision<'a> {
        let best = sims
            .matched()
            .iter()
            .filter(|&&doc| self.live_by_doc(doc).is_some_and(|l| is_embedded(l.kind)))
            .map(|&doc| f64::from(sims.get(doc)))
            .fold(0.0, f64::max);
        Decision {
            engine: self,
            prompt: self.index.prompt_terms(text),
            sims,
            best,
            model: if self.semantic.is_some() {
                relevance::WEIGHTS
            } else {
                relevance::WEIGHTS_LEXICAL
            },
        }
    }

    /// Why the item `id` is or is not shown for `query`.
    pub fn explain(
        &self,
        learned: &Learned,
        id: &str,
        query: &Query,
        exclude: &HashSet<String>,
    ) -> Result<Option<Explanation>, QueryError> {
        explain::explain(self, learned, id, &bounded(query), exclude)
    }
}

/// One candidate of a prompt, as the decision to show sees it.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub id: String,
    pub kind: Kind,
    pub evidence: relevance::Evidence,
    pub probability: f64,
}

/// The decision to show on one prompt: the prompt's words, the
/// similarities, the best candidate's, and the model.
pub(crate) struct Decision<'a> {
    engine: &'a Engine,
    prompt: crate::text::bm25::PromptTerms,
    sims: &'a Similarities,
    best: f64,
    model: relevance::Model,
}

impl Decision<'_> {
    /// The evidence for `live` and its estimate.
    pub(crate) fn estimate(&self, live: &Live) -> (relevance::Evidence, f64) {
        let similarity = f64::from(self.sims.get(live.doc));
        let (lexical, cosine) = self
            .sims
            .parts(live.doc)
            .map_or((similarity, 0.0), |(l, c)| (f64::from(l), f64::from(c)));
        let evidence = relevance::evidence(
            &self.engine.index,
            &self.prompt,
            &live.item,
            (lexical, cosine, similarity),
            self.best,
        );
        let probability = self.model.probability(&evidence);
        (evidence, probability)
    }
}

/// From this many item vectors on, a query computes its cosines on a
/// second thread beside its lexical pass (below, starting the thread
/// costs more than it saves).
const PARALLEL_FROM: usize = 20_000;

/// The query as it is answered: its task cut to what a query considers
/// ([`crate::text::considered`]), so time stays bounded however long it is.
fn bounded(query: &Query) -> Cow<'_, Query> {
    match crate::text::considered(&query.task) {
        Cow::Borrowed(_) => Cow::Borrowed(query),
        Cow::Owned(task) => Cow::Owned(Query {
            task,
            ..query.clone()
        }),
    }
}

/// The instant a query is scored at.
pub(crate) fn query_now(query: &Query) -> Result<i64, QueryError> {
    match &query.now {
        Some(text) => crate::time::parse_instant(text).map_err(QueryError::BadNow),
        None => Ok(crate::time::now()),
    }
}

/// The text of an item per index field.
fn text_fields(item: &Item) -> Vec<(Field, Cow<'_, str>)> {
    fn join<'a>(parts: &[&'a [String]]) -> Cow<'a, str> {
        Cow::Owned(
            parts
                .iter()
                .flat_map(|p| p.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        )
    }
    fn opt(o: &Option<String>) -> Cow<'_, str> {
        Cow::Borrowed(o.as_deref().unwrap_or(""))
    }
    let tags = &item.tags;
    match &item.body {
        Body::Pattern(p) => vec![
            (Field::Title, Cow::Borrowed(p.name.as_str())),
            (Field::Problem, Cow::Borrowed(p.problem.as_str())),
            (Field::Context, opt(&p.when_to_use)),
            (Field::Solution, Cow::Borrowed(p.solution.as_str())),
            (
                Field::Keywords,
                join(&[tags, &p.stack, p.category.as_slice()]),
            ),
            (Field::Body, opt(&p.code)),
        ],
        Body::AntiPattern(a) => vec![
            (Field::Title, Cow::Borrowed(a.name.as_str())),
            (Field::Problem, Cow::Borrowed(a.problem.as_str())),
            (Field::Solution, Cow::Borrowed(a.instead.as_str())),
            (Field::Keywords, join(&[tags, a.category.as_slice()])),
        ],
        Body::Gotcha(g) => vec![
            (Field::Title, Cow::Borrowed(g.title.as_str())),
            (Field::Solution, Cow::Borrowed(g.fix.as_str())),
            (Field::Keywords, join(&[tags, g.category.as_slice()])),
        ],
        Body::Experience(e) => vec![
            (Field::Problem, Cow::Borrowed(e.text.as_str())),
            (Field::Solution, opt(&e.detail)),
        ],
        Body::Lesson(l) => vec![
            (Field::Problem, Cow::Borrowed(l.text.as_str())),
            (
                Field::Keywords,
                join(&[tags, &l.prerequisites.tags, l.category.as_slice()]),
            ),
        ],
        Body::Learning(l) => vec![
            (Field::Title, Cow::Borrowed(l.title.as_str())),
            (Field::Problem, Cow::Borrowed(l.description.as_str())),
            (Field::Context, opt(&l.context)),
            (Field::Solution, opt(&l.suggested_action)),
            (
                Field::Keywords,
                join(&[tags, &l.keywords, l.error_type.as_slice()]),
            ),
        ],
        Body::Observation(o) => vec![
            (Field::Problem, Cow::Borrowed(o.content.as_str())),
            (Field::Keywords, join(&[tags])),
        ],
        Body::Exemplar(e) => vec![
            (Field::Problem, Cow::Borrowed(e.content.as_str())),
            (Field::Keywords, join(&[tags, e.kind.as_slice()])),
        ],
        Body::Seed(s) => vec![
            (Field::Title, Cow::Borrowed(s.hook.as_str())),
            (Field::Keywords, join(&[tags, s.source.as_slice()])),
        ],
    }
}

/// Whether items of `kind` are embedded: the kinds scored on the task's
/// similarity (seed 000's patterns, anti-patterns and gotchas, seed 001's
/// lessons). The others are scored by their own seeds without it
/// (observations on keywords, learnings on their own overlap, exemplars
/// and seeds on performance, experience on the agent), so a vector would
/// cost memory and a share of every query's cosine pass for nothing but
/// `memctl search`, which finds them by their words.
pub(crate) fn is_embedded(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Pattern | Kind::AntiPattern | Kind::Gotcha | Kind::Lesson
    )
}

/// `item`'s vector by `model`; `None` for a kind that is not embedded.
fn embed(model: &Model, item: &Item) -> Option<Vector> {
    is_embedded(item.kind())
        .then(|| model.embed(&embedded_text(item)))
        .flatten()
}

/// The text of an item that is embedded: every field but code, which says
/// little about meaning.
fn embedded_text(item: &Item) -> String {
    let mut text = String::new();
    for (field, part) in text_fields(item) {
        if field != Field::Body && !part.is_empty() {
            if !text.is_empty() {
                text.push_str(". ");
            }
            text.push_str(&part);
        }
    }
    text
}

fn borrow_fields<'a>(fields: &'a [(Field, Cow<'_, str>)]) -> Vec<(Field, &'a str)> {
    fields.iter().map(|(f, s)| (*f, s.as_ref())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::parse_file;

    fn load(path: &str, text: &str) -> FileLoad {
        parse_file(Arc::from(Path::new(path)), text.as_bytes())
    }

    fn gotcha(id: &str, title: &str) -> String {
        format!("gotchas:\n  - id: {id}\n    title: {title}\n    fix: f\n    category: db\n")
    }

    #[test]
    fn a_broken_save_keeps_the_last_good_items() {
        let mut engine = Engine::default();
        engine.apply(load("a.yaml", &gotcha("G-1", "first")));
        engine.apply(load("a.yaml", "gotchas: [unclosed\n"));
        assert!(engine.get("G-1").is_some());
        let state = &engine.files()[Path::new("a.yaml")];
        assert!(state.stale);
        assert_eq!(engine.diagnostics().len(), 1);
        // The next good save replaces them and clears the error.
        engine.apply(load("a.yaml", &gotcha("G-2", "second")));
        assert!(engine.get("G-1").is_none());
        assert!(engine.get("G-2").is_some());
        assert!(engine.diagnostics().is_empty());
    }

    /// The ids `query` shows, leaving out `exclude`, sorted.
    fn shown_ids(
        engine: &Engine,
        learned: &Learned,
        query: &Query,
        exclude: &[&str],
    ) -> Vec<String> {
        let exclude: HashSet<String> = exclude.iter().map(|id| id.to_string()).collect();
        let mut ids: Vec<String> = engine
            .query_excluding(learned, query, &exclude)
            .unwrap()
            .items
            .into_iter()
            .map(|i| i.id)
            .collect();
        ids.sort();
        ids
    }

    #[test]
    fn a_session_start_reads_the_pinned_lessons_as_their_files_change() {
        let lessons = |pinned: &[&str]| {
            ["L-1", "L-2", "L-3"]
                .iter()
                .fold(String::from("lessons:\n"), |text, id| {
                    let pin = pinned.contains(id);
                    text + &format!(
                        "  - id: {id}\n    text: retry the queue ({id})\n    pinned: {pin}\n"
                    )
                })
        };
        let session_start = Query {
            kinds: vec![Kind::Lesson],
            ..Query::default()
        };
        let start =
            |engine: &Engine, learned: &Learned| shown_ids(engine, learned, &session_start, &[]);
        let nothing = Learned::default();
        let mut engine = Engine::default();
        engine.apply(load("l.yaml", &lessons(&["L-1"])));
        assert_eq!(start(&engine, &nothing), ["L-1"]);
        engine.apply(load("l.yaml", &lessons(&["L-2", "L-3"])));
        assert_eq!(start(&engine, &nothing), ["L-2", "L-3"]);
        // A pin learning made comes in beside them, once, and only while
        // its lesson is live.
        let mut learned = Learned::default();
        let everywhere = crate::learning::Pin {
            manual: true,
            tags: Vec::new(),
        };
        for id in ["L-1", "L-3", "gone"] {
            learned.set_pins(id, Some(vec![everywhere.clone()]));
        }
        assert_eq!(start(&engine, &learned), ["L-1", "L-2", "L-3"]);
        engine.apply(load("l.yaml", &lessons(&[])));
        assert_eq!(start(&engine, &nothing), Vec::<String>::new());
        assert_eq!(start(&engine, &learned), ["L-1", "L-3"]);
        engine.remove_file(Path::new("l.yaml"));
        assert_eq!(start(&engine, &learned), Vec::<String>::new());
    }

    #[test]
    fn a_prompt_leaves_out_the_lessons_its_session_was_shown() {
        let mut engine = Engine::default();
        let lessons: String = ["L-1", "L-2", "L-3"]
            .iter()
            .map(|id| {
                format!("  - id: {id}\n    text: retry the webhook queue with backoff ({id})\n")
            })
            .collect();
        engine.apply(load("l.yaml", &format!("lessons:\n{lessons}")));
        let prompt = Query {
            task: "the webhook queue needs a retry with backoff".into(),
            task_match: true,
            kinds: vec![Kind::Lesson],
            ..Query::default()
        };
        let shown = |exclude: &[&str]| shown_ids(&engine, &Learned::default(), &prompt, exclude);
        assert_eq!(shown(&[]), ["L-1", "L-2", "L-3"]);
        assert_eq!(shown(&["L-2"]), ["L-1", "L-3"]);
        assert_eq!(shown(&["L-1", "L-3", "gone"]), ["L-2"]);
    }

    #[test]
    fn a_duplicate_takes_over_when_the_owner_goes() {
        let mut engine = Engine::default();
        engine.apply(load("a.yaml", &gotcha("G-1", "from a")));
        engine.apply(load("b.yaml", &gotcha("G-1", "from b")));
        let diags = engine.diagnostics();
        assert_eq!(diags.len(), 1);
        assert_eq!(
            diags[0].to_string(),
            "b.yaml:2:5: duplicate id `G-1`: already defined at a.yaml:2:5"
        );
        let Body::Gotcha(g) = &engine.get("G-1").unwrap().body else {
            panic!()
        };
        assert_eq!(g.title, "from a");
        engine.remove_file(Path::new("a.yaml"));
        let Body::Gotcha(g) = &engine.get("G-1").unwrap().body else {
            panic!()
        };
        assert_eq!(g.title, "from b");
        assert!(engine.diagnostics().is_empty());
        assert_eq!(engine.counts().items[&Kind::Gotcha], 1);
    }

    #[test]
    fn a_projects_item_is_hidden_while_a_global_one_claims_its_id() {
        let mut engine = Engine::default();
        let shop = engine.register_project(Path::new("/shop"));
        // The titles of the items a query in `scope` sees.
        let seen = |engine: &Engine, scope: ScopeId| -> Vec<String> {
            let mut titles: Vec<String> = engine
                .live_items()
                .filter(|live| engine.visible(live, scope))
                .map(|live| match &live.item.body {
                    Body::Gotcha(g) => g.title.clone(),
                    _ => panic!(),
                })
                .collect();
            titles.sort();
            titles
        };
        engine.apply_scoped(load("/shop/.memd/g.yaml", &gotcha("G-1", "shop's")), shop);
        assert_eq!(seen(&engine, shop), ["shop's"]);
        assert!(seen(&engine, GLOBAL).is_empty());
        // A global item takes the id: the project sees it instead.
        engine.apply(load("a.yaml", &gotcha("G-1", "global a")));
        assert_eq!(seen(&engine, shop), ["global a"]);
        // The project's file changes: still hidden.
        engine.apply_scoped(
            load("/shop/.memd/g.yaml", &gotcha("G-1", "shop's, new")),
            shop,
        );
        assert_eq!(seen(&engine, shop), ["global a"]);
        // A project registered now, with the same id: hidden from the start.
        let other = engine.register_project(Path::new("/other"));
        engine.apply_scoped(
            load("/other/.memd/g.yaml", &gotcha("G-1", "other's")),
            other,
        );
        assert_eq!(seen(&engine, other), ["global a"]);
        // The global owner goes and a duplicate takes over: still hidden.
        engine.apply(load("b.yaml", &gotcha("G-1", "global b")));
        engine.remove_file(Path::new("a.yaml"));
        assert_eq!(seen(&engine, shop), ["global b"]);
        // No global item claims it any more: each project sees its own.
        engine.remove_file(Path::new("b.yaml"));
        assert_eq!(seen(&engine, shop), ["shop's, new"]);
        assert_eq!(seen(&engine, other), ["other's"]);
        assert_eq!(
            engine.get_in("G-1", shop).map(|i| i.id.as_str()),
            Some("G-1")
        );
    }

    #[test]
    fn the_cosines_on_a_second_thread_give_the_same_similarities() {
        let mut engine = Engine::default();
        engine.set_model(Some(Arc::new(Model::built_in().unwrap())));
        let gotchas: String = [
            ("G-1", "redb compaction stalls the writer"),
            ("G-2", "database connection pool exhausted under load"),
            ("G-3", "stale cache after a price update"),
            ("G-4", "dates shift by a day across time zones"),
        ]
        .iter()
        .map(|(id, title)| format!("  - id: {id}\n    title: {title}\n    fix: see the runbook\n"))
        .collect();
        engine.apply(load("g.yaml", &format!("gotchas:\n{gotchas}")));
        for text in [
            "the pool runs dry when load spikes",
            "compaction",
            "a joke about nothing",
            "",
        ] {
            let (one, two) = (
                engine.similarities_on(text, false),
                engine.similarities_on(text, true),
            );
            assert_eq!(one.matched(), two.matched(), "{text}");
            for doc in 0..4 {
                assert_eq!(one.get(doc), two.get(doc), "{text}");
                assert_eq!(one.parts(doc), two.parts(doc), "{text}");
            }
        }
    }

    #[test]
    fn only_kinds_scored_on_the_task_are_embedded() {
        let mut engine = Engine::default();
        engine.set_model(Some(Arc::new(Model::built_in().unwrap())));
        engine.apply(load("g.yaml", &gotcha("G-1", "redb compaction stalls")));
        engine.apply(load(
            "o.jsonl",
            r#"{"id": "O-1", "type": "decision", "content": "compaction runs nightly", "created_at": "2026-11-20T09:12:00Z"}"#,
        ));
        assert_eq!(engine.counts().items[&Kind::Observation], 1);
        assert_eq!(engine.semantic().unwrap().vectors(), 1);
        let observation = engine.get("O-1").unwrap();
        let stored = engine.embed_items([&**observation]).unwrap();
        assert_eq!(stored, vec![None]);
        engine.remove_file(Path::new("g.yaml"));
        assert_eq!(engine.semantic().unwrap().vectors(), 0);
    }

    #[test]
    fn a_loaded_file_keeps_no_room_for_more_items_than_it_has() {
        let mut engine = Engine::default();
        let text: String = (0..50)
            .map(|i| gotcha(&format!("G-{i}"), "t"))
            .collect::<Vec<_>>()
            .join("")
            .replace("\ngotchas:\n", "\n");
        engine.apply(load("a.yaml", &text));
        let items = &engine.files()[Path::new("a.yaml")].items;
        assert_eq!(items.len(), 50);
        assert_eq!(items.capacity(), 50);
    }

    #[test]
    fn a_changed_file_leaves_the_index_consistent() {
        let mut engine = Engine::default();
        engine.apply(load("a.yaml", &gotcha("G-1", "redb compaction")));
        engine.apply(load("b.yaml", &gotcha("G-2", "socket timeouts")));
        engine.apply(load("a.yaml", &gotcha("G-1", "notify overflow")));
        let sims = engine.index.similarities("redb");
        assert!(sims.matched().is_empty());
        let sims = engine.index.similarities("overflow");
        assert_eq!(sims.matched().len(), 1);
        assert_eq!(engine.index.len(), 2);
    }
}

#[cfg(test)]
mod pruning_tests {
    //! The pruned selection must equal an exhaustive one.

    use super::*;
    use crate::knowledge::parse_file;
    use crate::scoring::rubric::{score_pattern, select_patterns, task_points, RubricContext};

    /// A seeded generator of numbers below its argument.
    fn below(mut seed: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        }
    }

    /// The ids `query` shows, in order.
    fn shown(engine: &Engine, query: &Query) -> Vec<String> {
        engine
            .query(&Learned::default(), query)
            .unwrap()
            .items
            .into_iter()
            .map(|i| i.id)
            .collect()
    }

    #[test]
    fn pattern_selection_equals_exhaustive_scoring() {
        let words = [
            "webhook", "queue", "retry", "schema", "cache", "auth", "deploy", "index",
        ];
        let roles = ["backend-engineer", "qa-engineer", "devops-engineer"];
        let products = ["payflow", "ledger", "dashboard"];
        let mut yaml = String::from("patterns:\n");
        let mut next = below(7u64);
        for i in 0..400 {
            yaml.push_str(&format!(
                "  - id: P{i}\n    name: {} {}\n    problem: {} {} {}\n    solution: {}\n    roles: [{}]\n    adjacent_roles: [{}]\n    category: {}\n    learned_from: {{ product: {}, date: 2026-11-{:02} }}\n    stack: [{}]\n    confidence: {}\n    times_applied: {}\n",
                words[next(8)], words[next(8)], words[next(8)], words[next(8)], words[next(8)], words[next(8)],
                roles[next(3)], roles[next(3)], words[next(8)], products[next(3)], 1 + next(20),
                words[next(8)], ["high", "medium", "low"][next(3)], next(5),
            ));
        }
        let mut engine = Engine::default();
        engine.apply(parse_file(Arc::from(Path::new("p.yaml")), yaml.as_bytes()));
        for q in 0..60 {
            let query = Query {
                task: format!("{} {}", words[q % 8], words[(q * 3 + 1) % 8]),
                agent: Some(roles[q % 3].into()),
                product: Some(products[(q / 3) % 3].into()),
                tags: vec![words[(q * 5) % 8].into()],
                now: Some("2026-11-22T00:00:00Z".into()),
                kinds: vec![Kind::Pattern],
                ..Query::default()
            };
            let pruned = shown(&engine, &query);
            let now = crate::time::parse_instant("2026-11-22T00:00:00Z").unwrap();
            let ctx = RubricContext {
                product: query.product.clone(),
                tags: query.tags.clone(),
                agent: query.agent.clone(),
                now,
                ..RubricContext::default()
            };
            let sims = engine.index.similarities(&query.task);
            let mut all: Vec<(u8, f64, String)> = engine
                .live_items()
                .filter_map(|live| {
                    let Body::Pattern(p) = &live.item.body else {
                        return None;
                    };
                    let s = f64::from(sims.get(live.doc));
                    let score = score_pattern(p, &live.item.tags, task_points(s), 0, &ctx);
                    Some((score.total(), s, live.item.id.clone()))
                })
                .collect();
            all.sort_by(|a, b| {
                b.0.cmp(&a.0)
                    .then(b.1.total_cmp(&a.1))
                    .then_with(|| a.2.cmp(&b.2))
            });
            let ranked: Vec<(usize, u8)> = all.iter().enumerate().map(|(i, c)| (i, c.0)).collect();
            let exhaustive: Vec<String> = select_patterns(&ranked)
                .into_iter()
                .map(|(i, _)| all[i].2.clone())
                .collect();
            assert_eq!(pruned, exhaustive, "query {q}");
        }
    }

    #[test]
    fn observation_selection_equals_exhaustive_scoring() {
        use crate::scoring::observation::{self, Keywords, MAX_OBSERVATIONS};
        let words = ["redb", "socket", "Retry", "cache", "deploy", "schema"];
        let types = [
            "decision", "problem", "warning", "success", "pattern", "bugfix",
        ];
        let agents = ["backend-engineer", "qa-engineer"];
        let mut next = below(11u64);
        let mut jsonl = String::new();
        for i in 0..300 {
            jsonl.push_str(&format!(
                "{{\"id\":\"O{i}\",\"type\":\"{}\",\"content\":\"{} and {} {}\",\"agent_type\":\"{}\",\"created_at\":\"2026-11-{:02}T{:02}:00:00Z\"}}\n",
                types[next(6)], words[next(6)], words[next(6)], words[next(6)], agents[next(2)],
                20 + next(2), next(24),
            ));
        }
        let mut engine = Engine::default();
        engine.apply(parse_file(
            Arc::from(Path::new("o.jsonl")),
            jsonl.as_bytes(),
        ));
        assert_eq!(engine.counts().items[&Kind::Observation], 300);
        for q in 0..40 {
            let query = Query {
                task: String::new(),
                keywords: vec![words[q % 6].into(), words[(q * 5 + 1) % 6].into()],
                agent: Some(agents[q % 2].into()),
                now: Some("2026-11-22T00:00:00Z".into()),
                kinds: vec![Kind::Observation],
                mode: if q % 3 == 0 {
                    crate::protocol::Mode::Aggressive
                } else {
                    crate::protocol::Mode::Conservative
                },
                ..Query::default()
            };
            let pruned = shown(&engine, &query);
            let now = crate::time::parse_instant("2026-11-22T00:00:00Z").unwrap();
            let keywords = Keywords::new(&query.keywords);
            let agent = features::hash(query.agent.as_deref().unwrap());
            let mut all: Vec<(f64, String)> = engine
                .live_items()
                .filter_map(|live| {
                    let Body::Observation(o) = &live.item.body else {
                        return None;
                    };
                    let features::Features::Observation { agent: a, .. } = &live.features else {
                        return None;
                    };
                    let hours = (now - o.created_at) as f64 / crate::time::SECS_PER_HOUR;
                    let s = observation::score(
                        o.kind,
                        hours,
                        *a == agent,
                        keywords.overlap(&o.content),
                    );
                    (s.total() >= observation::min_score(query.mode))
                        .then(|| (s.total(), live.item.id.clone()))
                })
                .collect();
            all.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            let exhaustive: Vec<String> = all
                .into_iter()
                .take(MAX_OBSERVATIONS)
                .map(|(_, id)| id)
                .collect();
            assert!(!exhaustive.is_empty(), "query {q}");
            assert_eq!(pruned, exhaustive, "query {q}");
        }
    }
}

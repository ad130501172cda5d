//! The simulated team: repositories with real manifests, topics they work
//! on, lessons written for a topic and a scope, and the hidden truth of
//! which lesson helps where.
//!
//! Four teams ([`Team`]), each reported on its own:
//! - `stacks`: ten repositories of six languages; a lesson helps wherever
//!   its scope (everywhere, a language, a framework, one repository)
//!   covers the repository. Sessions favour a few repositories.
//! - `conventions`: ten repositories that share three stacks but not their
//!   conventions: a lesson helps in a random half (rounded down) of the
//!   repositories its scope covers that work on its topic, decided per
//!   lesson and repository, and two lessons a topic are facets that read
//!   as if they fit its repositories but help nowhere.
//! - `sparse`: `stacks` with sessions spread evenly, about twelve a
//!   repository in 120.
//! - `busy`: three of `stacks`' repositories, forty sessions each.
//!
//! A lesson is relevant to a prompt when it is about the prompt's topic and
//! its scope covers the repository: every repository (general advice), a
//! language, a framework, or one repository (a local convention). Lessons
//! about the same topic for another stack are the confusable ones: they
//! match the prompt's words as well as the right ones do. Some general
//! lessons are obsolete: on topic everywhere, relevant nowhere.

use std::fmt::Write as _;
use std::path::Path;

use crate::corpus::Rng;

/// A repository: its name, language, frameworks, manifest and topics.
pub struct Repo {
    pub name: &'static str,
    pub language: &'static str,
    pub frameworks: &'static [&'static str],
    /// File name and content of the manifest the hook derives tags from.
    pub manifest: (&'static str, &'static str),
    /// Indices into [`TOPICS`] this repository's work is about.
    pub topics: Vec<usize>,
}

/// A topic: the words people use for it.
pub struct Topic {
    pub words: &'static [&'static str],
}

/// Who a lesson is for.
#[derive(Clone, Debug, PartialEq)]
pub enum Scope {
    General,
    Language(&'static str),
    Framework(&'static str),
    Repo(&'static str),
}

/// One lesson of the corpus.
#[derive(Clone, Debug)]
pub struct Lesson {
    pub id: String,
    pub topic: usize,
    pub scope: Scope,
    /// Relevant nowhere (outdated advice, or a facet), though on topic.
    pub obsolete: bool,
    /// The repositories it helps in, where that is decided per repository
    /// (`conventions`); `None`: wherever its scope covers.
    pub only: Option<Vec<&'static str>>,
    pub text: String,
    pub tags: Vec<String>,
}

/// The kind of team a run simulates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Team {
    Stacks,
    Conventions,
    Sparse,
    Busy,
}

impl Team {
    pub const ALL: [Team; 4] = [Team::Stacks, Team::Conventions, Team::Sparse, Team::Busy];

    pub fn name(self) -> &'static str {
        match self {
            Team::Stacks => "stacks",
            Team::Conventions => "conventions",
            Team::Sparse => "sparse",
            Team::Busy => "busy",
        }
    }
}

pub const TOPICS: &[Topic] = &[
    Topic {
        words: &[
            "token", "expired", "refresh", "jwt", "bearer", "auth", "header", "login",
        ],
    }, // auth-tokens
    Topic {
        words: &[
            "migration",
            "schema",
            "column",
            "lock",
            "table",
            "rollback",
            "alter",
            "backfill",
        ],
    }, // migrations
    Topic {
        words: &[
            "flaky",
            "test",
            "intermittent",
            "fixture",
            "ordering",
            "sleep",
            "ci",
            "retry",
        ],
    }, // flaky-tests
    Topic {
        words: &[
            "cache",
            "stale",
            "invalidate",
            "ttl",
            "redis",
            "key",
            "eviction",
            "warm",
        ],
    }, // caching
    Topic {
        words: &[
            "log",
            "logger",
            "structured",
            "level",
            "noisy",
            "trace",
            "correlation",
            "stdout",
        ],
    }, // logging
    Topic {
        words: &[
            "timezone",
            "utc",
            "date",
            "datetime",
            "offset",
            "daylight",
            "timestamp",
            "calendar",
        ],
    }, // timezones
    Topic {
        words: &[
            "json",
            "serialize",
            "decimal",
            "field",
            "null",
            "payload",
            "encode",
            "snake",
        ],
    }, // serialization
    Topic {
        words: &[
            "http",
            "retry",
            "backoff",
            "timeout",
            "upstream",
            "client",
            "idempotent",
            "503",
        ],
    }, // http-retries
    Topic {
        words: &[
            "pagination",
            "cursor",
            "page",
            "offset",
            "limit",
            "listing",
            "sort",
            "next",
        ],
    }, // pagination
    Topic {
        words: &[
            "upload",
            "file",
            "multipart",
            "size",
            "stream",
            "s3",
            "presigned",
            "mime",
        ],
    }, // uploads
    Topic {
        words: &[
            "queue", "job", "worker", "consumer", "dead", "letter", "ack", "backlog",
        ],
    }, // queues
    Topic {
        words: &[
            "config",
            "environment",
            "variable",
            "secret",
            "dotenv",
            "default",
            "override",
            "settings",
        ],
    }, // config
    Topic {
        words: &[
            "memory",
            "leak",
            "heap",
            "allocation",
            "profile",
            "oom",
            "growth",
            "gc",
        ],
    }, // memory
    Topic {
        words: &[
            "race",
            "concurrent",
            "mutex",
            "deadlock",
            "thread",
            "lock",
            "atomic",
            "shared",
        ],
    }, // concurrency
    Topic {
        words: &[
            "docker",
            "image",
            "container",
            "layer",
            "build",
            "dockerfile",
            "compose",
            "slim",
        ],
    }, // docker
    Topic {
        words: &[
            "rate", "limit", "throttle", "quota", "429", "burst", "bucket", "abuse",
        ],
    }, // rate-limits
    Topic {
        words: &[
            "email",
            "smtp",
            "template",
            "bounce",
            "sender",
            "inbox",
            "notification",
            "unsubscribe",
        ],
    }, // email
    Topic {
        words: &[
            "search",
            "index",
            "query",
            "relevance",
            "fuzzy",
            "analyzer",
            "ranking",
            "typo",
        ],
    }, // search
    Topic {
        words: &[
            "feature",
            "flag",
            "toggle",
            "rollout",
            "percentage",
            "experiment",
            "killswitch",
            "variant",
        ],
    }, // feature-flags
    Topic {
        words: &[
            "dependency",
            "upgrade",
            "version",
            "lockfile",
            "pin",
            "breaking",
            "changelog",
            "vulnerability",
        ],
    }, // dependencies
];

/// Words a lesson's advice is written with.
const ADVICE: &[&str] = &[
    "always", "never", "prefer", "check", "before", "after", "instead", "wrap", "guard",
    "document", "helper", "wrapper", "explicit", "verify", "measure", "assert",
];

/// Words prompts are written with besides their topic.
const ASKING: &[&str] = &[
    "we keep seeing",
    "can you look at",
    "please fix",
    "investigate why",
    "help me with",
    "there is a bug with",
    "clean up",
    "I need to change",
    "why does",
    "make sure",
];

/// The team's repositories, with the manifests the real hook reads.
pub fn repos(rng: &mut Rng, team: Team) -> Vec<Repo> {
    let mut repos = match team {
        Team::Conventions => shared_stacks(),
        Team::Busy => stacks().into_iter().take(3).collect(),
        Team::Stacks | Team::Sparse => stacks(),
    };
    // Each repository works on eight of the twenty topics; neighbours share
    // some, so every topic is worked on somewhere.
    for (i, r) in repos.iter_mut().enumerate() {
        let mut topics: Vec<usize> = (0..4).map(|k| (2 * i + k) % TOPICS.len()).collect();
        while topics.len() < 8 {
            let t = rng.below(TOPICS.len());
            if !topics.contains(&t) {
                topics.push(t);
            }
        }
        r.topics = topics;
    }
    repos
}

/// Ten repositories of six languages.
fn stacks() -> Vec<Repo> {
    vec![
        repo("billing-api", "python", &["django", "pytest"], ("pyproject.toml", "[project]\nname = \"billing-api\"\ndependencies = [\"django>=5\", \"pytest\"]\n")),
        repo("ml-pipeline", "python", &["pandas", "numpy"], ("requirements.txt", "pandas==2.2\nnumpy==2.1\n")),
        repo("web-dashboard", "javascript", &["react", "vite"], ("package.json", "{\"dependencies\": {\"react\": \"^19\"}, \"devDependencies\": {\"vite\": \"^6\"}}\n")),
        repo("checkout-service", "javascript", &["express", "jest"], ("package.json", "{\"dependencies\": {\"express\": \"^5\"}, \"devDependencies\": {\"jest\": \"^30\"}}\n")),
        repo("edge-proxy", "go", &["gin"], ("go.mod", "module example.com/edge-proxy\n\nrequire github.com/gin-gonic/gin v1.10.0\n")),
        repo("ingest-worker", "go", &[], ("go.mod", "module example.com/ingest-worker\n\ngo 1.23\n")),
        repo("search-engine", "rust", &["tokio", "axum"], ("Cargo.toml", "[package]\nname = \"search-engine\"\n\n[dependencies]\ntokio = \"1\"\naxum = \"0.8\"\n")),
        repo("cli-tools", "rust", &["clap"], ("Cargo.toml", "[package]\nname = \"cli-tools\"\n\n[dependencies]\nclap = \"4\"\n")),
        repo("storefront", "ruby", &["rails", "rspec"], ("Gemfile", "source \"https://rubygems.org\"\ngem \"rails\"\ngem \"rspec\"\n")),
        repo("payments-core", "java", &["spring", "junit"], ("pom.xml", "<project><artifactId>spring-boot-starter</artifactId><artifactId>junit</artifactId></project>\n")),
    ]
}

/// Ten repositories on three stacks: what tells them apart is their own
/// name, not their languages or frameworks.
#[rustfmt::skip]
fn shared_stacks() -> Vec<Repo> {
    const DJANGO: (&str, &str) = ("pyproject.toml", "[project]\ndependencies = [\"django>=5\", \"pytest\"]\n");
    const REACT: (&str, &str) = ("package.json", "{\"dependencies\": {\"react\": \"^19\"}, \"devDependencies\": {\"vite\": \"^6\"}}\n");
    const GIN: (&str, &str) = ("go.mod", "module example.com/service\n\nrequire github.com/gin-gonic/gin v1.10.0\n");
    vec![
        repo("billing-api", "python", &["django", "pytest"], DJANGO),
        repo("accounts-api", "python", &["django", "pytest"], DJANGO),
        repo("reports-api", "python", &["django", "pytest"], DJANGO),
        repo("catalog-api", "python", &["django", "pytest"], DJANGO),
        repo("web-dashboard", "javascript", &["react", "vite"], REACT),
        repo("admin-ui", "javascript", &["react", "vite"], REACT),
        repo("onboarding-ui", "javascript", &["react", "vite"], REACT),
        repo("edge-proxy", "go", &["gin"], GIN),
        repo("auth-gateway", "go", &["gin"], GIN),
        repo("rate-limiter", "go", &["gin"], GIN),
    ]
}

fn repo(
    name: &'static str,
    language: &'static str,
    frameworks: &'static [&'static str],
    manifest: (&'static str, &'static str),
) -> Repo {
    Repo {
        name,
        language,
        frameworks,
        manifest,
        topics: Vec::new(),
    }
}

impl Scope {
    /// Whether advice with this scope applies in `repo`.
    pub fn covers(&self, repo: &Repo) -> bool {
        match self {
            Scope::General => true,
            Scope::Language(l) => *l == repo.language,
            Scope::Framework(f) => repo.frameworks.contains(f),
            Scope::Repo(r) => *r == repo.name,
        }
    }
}

impl Lesson {
    /// The hidden truth: whether this lesson helps a prompt on `topic` in
    /// `repo`.
    pub fn relevant(&self, repo: &Repo, topic: usize) -> bool {
        !self.obsolete
            && self.topic == topic
            && match &self.only {
                Some(only) => only.contains(&repo.name),
                None => self.scope.covers(repo),
            }
    }
}

fn pick<'a>(rng: &mut Rng, words: &[&'a str], n: usize) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    while out.len() < n.min(words.len()) {
        let w = words[rng.below(words.len())];
        if !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// Ten lessons a topic, two hundred in all: three general (one of them
/// obsolete), four for languages, two for frameworks, one for a single
/// repository, spread over the stacks of the repositories that work on it.
pub fn lessons(rng: &mut Rng, repos: &[Repo], team: Team) -> Vec<Lesson> {
    let mut out = Vec::new();
    for (t, topic) in TOPICS.iter().enumerate() {
        let users: Vec<&Repo> = repos.iter().filter(|r| r.topics.contains(&t)).collect();
        let mut languages: Vec<&'static str> = users.iter().map(|r| r.language).collect();
        for l in ["python", "javascript", "go", "rust", "ruby", "java"] {
            if !languages.contains(&l) {
                languages.push(l);
            }
        }
        let mut frameworks: Vec<&'static str> = users
            .iter()
            .flat_map(|r| r.frameworks.iter().copied())
            .collect();
        for f in [
            "django", "react", "express", "gin", "axum", "rails", "spring",
        ] {
            if !frameworks.contains(&f) {
                frameworks.push(f);
            }
        }
        let local = users
            .get(rng.below(users.len().max(1)))
            .map_or("billing-api", |r| r.name);
        let mut scopes = vec![Scope::General, Scope::General, Scope::General];
        scopes.extend(languages.iter().take(4).map(|l| Scope::Language(l)));
        scopes.extend(frameworks.iter().take(2).map(|f| Scope::Framework(f)));
        scopes.push(Scope::Repo(local));
        for (k, scope) in scopes.into_iter().enumerate() {
            let id = format!("L-{:03}", out.len() + 1);
            let words = pick(rng, topic.words, 4);
            let advice = pick(rng, ADVICE, 3);
            let (lead, tags): (String, Vec<String>) = match &scope {
                Scope::General => (String::new(), Vec::new()),
                Scope::Language(l) => (format!("In {l} services, "), vec![l.to_string()]),
                Scope::Framework(f) => (format!("With {f}, "), vec![f.to_string()]),
                Scope::Repo(r) => {
                    let language = repos
                        .iter()
                        .find(|x| x.name == *r)
                        .map_or("", |x| x.language);
                    (
                        format!("In our {language} code, "),
                        vec![language.to_string()],
                    )
                }
            };
            // Some lessons are written without tags, as people do.
            let tags = if rng.below(4) == 0 { Vec::new() } else { tags };
            let text = format!(
                "{lead}{} {} {}: {} the {} {} and {} the {} {}.",
                words[0],
                words[1],
                advice[0],
                advice[1],
                words[2],
                words[0],
                advice[2],
                words[3],
                words[1]
            );
            out.push(Lesson {
                id,
                topic: t,
                scope,
                obsolete: k == 2,
                only: None,
                text,
                tags,
            });
        }
    }
    if team == Team::Conventions {
        decide_per_repository(rng, repos, &mut out);
    }
    out
}

/// `conventions`: which repositories each lesson helps in, decided per
/// lesson and repository; two lessons a topic (besides the obsolete one)
/// become facets that help nowhere.
fn decide_per_repository(rng: &mut Rng, repos: &[Repo], lessons: &mut [Lesson]) {
    for t in 0..TOPICS.len() {
        let mut facets = 0;
        for l in lessons.iter_mut().filter(|l| l.topic == t) {
            if l.obsolete {
                l.only = Some(Vec::new());
                continue;
            }
            if facets < 2 && l.scope != Scope::General && rng.below(3) == 0 {
                facets += 1;
                l.obsolete = true;
                l.only = Some(Vec::new());
                continue;
            }
            let mut covered: Vec<&'static str> = repos
                .iter()
                .filter(|r| r.topics.contains(&t) && l.scope.covers(r))
                .map(|r| r.name)
                .collect();
            let keep = covered.len() / 2;
            while covered.len() > keep.max(1) {
                covered.remove(rng.below(covered.len()));
            }
            l.only = Some(covered);
        }
    }
}

/// A prompt about `topic` in `repo`, in a developer's words.
pub fn prompt(rng: &mut Rng, topic: usize) -> String {
    let n = 2 + rng.below(2);
    let words = pick(rng, TOPICS[topic].words, n);
    let ask = ASKING[rng.below(ASKING.len())];
    format!(
        "{ask} the {} in the service, it breaks again",
        words.join(" ")
    )
}

/// Writes the lessons as one knowledge file.
pub fn write_lessons(dir: &Path, lessons: &[Lesson]) {
    let mut yaml = String::from("lessons:\n");
    for l in lessons {
        let _ = writeln!(yaml, "  - id: {}\n    text: \"{}\"", l.id, l.text);
        if !l.tags.is_empty() {
            let _ = writeln!(yaml, "    tags: [{}]", l.tags.join(", "));
        }
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("lessons.yaml"), yaml).unwrap();
}

/// Creates each repository as a directory with `.git` and its manifest.
pub fn write_repos(dir: &Path, repos: &[Repo]) {
    for r in repos {
        let root = dir.join(r.name);
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join(r.manifest.0), r.manifest.1).unwrap();
    }
}

//! `memd.toml`: knowledge roots, query defaults, and each agent role's
//! domains. Every path can be overridden the same way in `memd` and
//! `memctl`: a flag, then an environment variable, then the file, then the
//! platform default from `directories`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::knowledge::item::normalize_role;
use crate::knowledge::node::pos_of_offset;
use crate::knowledge::Pos;
use crate::protocol::{Mode, DEFAULT_BUDGET_CHARS};

/// Environment variable naming the config file.
pub const ENV_CONFIG: &str = "MEMD_CONFIG";
/// Environment variable naming the data directory.
pub const ENV_DATA_DIR: &str = "MEMD_DATA_DIR";
/// The config file's name.
pub const CONFIG_FILE: &str = "memd.toml";

/// Why the config could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not valid TOML or has a wrong field.
    #[error("{path}:{pos}: {message}")]
    Parse {
        path: PathBuf,
        pos: Pos,
        message: String,
    },
}

/// An agent role's domains (seed 000, dimension C and gotcha matching).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Role {
    /// Categories core to the role.
    #[serde(default)]
    pub domains: Vec<String>,
    /// Categories adjacent to it.
    #[serde(default)]
    pub adjacent: Vec<String>,
}

/// Defaults applied to queries that do not say otherwise.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueryDefaults {
    /// Selection mode.
    pub mode: Mode,
    /// Block size cap in characters.
    pub budget_chars: u32,
    /// The prompt hook's block is one decision across kinds: only items
    /// whose relevance estimate reaches the threshold, at most two
    /// (`engine::relevance`). Off (the default until it also keeps the
    /// learning bench's recall): each kind fills its own quota, as the
    /// seeds alone would.
    pub decide: bool,
}

impl Default for QueryDefaults {
    fn default() -> Self {
        QueryDefaults {
            mode: Mode::Conservative,
            budget_chars: DEFAULT_BUDGET_CHARS,
            decide: false,
        }
    }
}

/// Settings of `memd serve`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DaemonSettings {
    /// Connections served at once.
    pub max_connections: usize,
    /// How long a connection may idle, or take to finish a frame.
    pub read_timeout_ms: u64,
    /// How long a client may take to read an answer before its connection
    /// is closed.
    pub write_timeout_ms: u64,
    /// Largest request accepted, in bytes.
    pub max_frame_bytes: u32,
    /// Log level when `RUST_LOG` is not set.
    pub log: String,
    /// Whether a symlink in a root may lead to a file outside it (off: a
    /// root is what its owner put there, and nothing else is read).
    pub follow_symlinks_out_of_roots: bool,
    /// Session audits untouched this many days are forgotten.
    pub session_days: u32,
    /// At most this many session audits are kept; beyond, the oldest go,
    /// evaluated ones first.
    pub max_sessions: usize,
}

impl Default for DaemonSettings {
    fn default() -> Self {
        DaemonSettings {
            max_connections: 256,
            read_timeout_ms: 10_000,
            write_timeout_ms: 5_000,
            max_frame_bytes: crate::protocol::MAX_FRAME_BYTES,
            log: "info".into(),
            follow_symlinks_out_of_roots: false,
            session_days: 30,
            max_sessions: 10_000,
        }
    }
}

/// The evaluator's judge.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvaluatorSettings {
    /// An external judge: program and arguments. Empty: the built-in judge.
    pub command: Vec<String>,
    /// How long the external judge may take per session.
    pub timeout_ms: u64,
}

impl Default for EvaluatorSettings {
    fn default() -> Self {
        EvaluatorSettings {
            command: Vec::new(),
            timeout_ms: 120_000,
        }
    }
}

/// Sharing verdicts with a team (`[team]`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TeamConfig {
    /// This engineer's name in a team's files; none: git's `user.email`
    /// in the repository.
    pub member: Option<String>,
}

/// The semantic tier (`[semantic]`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SemanticSettings {
    /// On by default; off, similarity is lexical only.
    pub enabled: bool,
    /// A model2vec model's directory (`tokenizer.json`,
    /// `model.safetensors`); none: the model built into memd.
    pub model: Option<PathBuf>,
}

impl Default for SemanticSettings {
    fn default() -> Self {
        SemanticSettings {
            enabled: true,
            model: None,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawConfig {
    roots: Option<Vec<String>>,
    data_dir: Option<String>,
    query: QueryDefaults,
    roles: BTreeMap<String, Role>,
    daemon: DaemonSettings,
    evaluator: EvaluatorSettings,
    semantic: SemanticSettings,
    team: TeamConfig,
}

/// The loaded configuration, paths resolved.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The file it came from, if any.
    pub path: Option<PathBuf>,
    /// Knowledge roots.
    pub roots: Vec<PathBuf>,
    /// The data directory.
    pub data_dir: PathBuf,
    /// Query defaults.
    pub query: QueryDefaults,
    /// Roles by normalised name.
    pub roles: BTreeMap<String, Role>,
    /// Settings of `memd serve`.
    pub daemon: DaemonSettings,
    /// The evaluator's judge.
    pub evaluator: EvaluatorSettings,
    /// The semantic tier.
    pub semantic: SemanticSettings,
    /// `[team]`.
    pub team: TeamConfig,
}

/// Where to look for things, from flags (and then the environment).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// `--data-dir DIR`.
    pub data_dir: Option<PathBuf>,
    /// `--root DIR`, repeatable: added to the configured roots.
    pub roots: Vec<PathBuf>,
}

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "memd")
}

fn home_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf())
}

/// Expands `~/` and resolves a relative path against `base`.
fn resolve(path: &str, base: &Path) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/") {
        if let Some(home) = home_dir() {
            return home.join(rest);
        }
    }
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

impl Config {
    /// Loads the config: `--config`, else `$MEMD_CONFIG`, else the platform
    /// config dir's `memd.toml` if it exists, else defaults. An explicitly
    /// named file must exist.
    pub fn load(overrides: &Overrides) -> Result<Config, ConfigError> {
        let named = overrides
            .config
            .clone()
            .or_else(|| std::env::var_os(ENV_CONFIG).map(PathBuf::from));
        let (path, raw) = match named {
            Some(path) => {
                let raw = read_raw(&path)?;
                (Some(path), raw)
            }
            None => match project_dirs().map(|d| d.config_dir().join(CONFIG_FILE)) {
                Some(path) if path.exists() => {
                    let raw = read_raw(&path)?;
                    (Some(path), raw)
                }
                _ => (None, RawConfig::default()),
            },
        };
        // Absolute, so the daemon's paths mean the same whatever its
        // working directory.
        let base = path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let base = std::path::absolute(&base).unwrap_or(base);
        let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
        let data_dir = overrides
            .data_dir
            .clone()
            .or_else(|| std::env::var_os(ENV_DATA_DIR).map(PathBuf::from))
            .map(absolute)
            .or_else(|| raw.data_dir.as_deref().map(|d| resolve(d, &base)))
            .or_else(|| project_dirs().map(|d| d.data_dir().to_path_buf()))
            .unwrap_or_else(|| PathBuf::from(".memd"));
        let mut roots: Vec<PathBuf> = match &raw.roots {
            Some(list) => list.iter().map(|r| resolve(r, &base)).collect(),
            None => {
                let mut defaults = Vec::new();
                if let Some(home) = home_dir() {
                    defaults.push(home.join(".claude/memory"));
                }
                defaults.push(data_dir.join("knowledge"));
                defaults
            }
        };
        for root in overrides.roots.iter().cloned().map(absolute) {
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
        let roles = raw
            .roles
            .into_iter()
            .map(|(name, role)| (normalize_role(&name), role))
            .collect();
        Ok(Config {
            path,
            roots,
            data_dir,
            query: raw.query,
            roles,
            daemon: raw.daemon,
            evaluator: raw.evaluator,
            team: raw.team,
            semantic: SemanticSettings {
                model: raw
                    .semantic
                    .model
                    .map(|m| resolve(&m.to_string_lossy(), &base)),
                ..raw.semantic
            },
        })
    }

    /// The semantic tier's model as configured: `None` when the tier is off.
    pub fn semantic_model(
        &self,
    ) -> Result<Option<std::sync::Arc<crate::semantic::Model>>, crate::semantic::ModelError> {
        if !self.semantic.enabled {
            return Ok(None);
        }
        let model = match &self.semantic.model {
            Some(dir) => crate::semantic::Model::load(dir)?,
            None => crate::semantic::Model::built_in()?,
        };
        Ok(Some(std::sync::Arc::new(model)))
    }

    /// The role config of an agent, if any.
    pub fn role(&self, agent: &str) -> Option<&Role> {
        self.roles.get(&normalize_role(agent))
    }
}

fn read_raw(path: &Path) -> Result<RawConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    toml::from_str(&text).map_err(|err| ConfigError::Parse {
        path: path.to_path_buf(),
        pos: err
            .span()
            .map(|s| pos_of_offset(text.as_bytes(), s.start))
            .unwrap_or_default(),
        message: err.message().trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_roots_relative_to_the_file_and_roles_normalised() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memd.toml");
        std::fs::write(
            &path,
            "roots = [\"knowledge\", \"/abs\"]\n[query]\nmode = \"aggressive\"\n[roles.\"Backend Engineer\"]\ndomains = [\"api\"]\n",
        )
        .unwrap();
        let cfg = Config::load(&Overrides {
            config: Some(path),
            data_dir: Some(dir.path().join("data")),
            roots: vec![PathBuf::from("/extra")],
        })
        .unwrap();
        assert_eq!(
            cfg.roots,
            [
                dir.path().join("knowledge"),
                PathBuf::from("/abs"),
                PathBuf::from("/extra")
            ]
        );
        assert_eq!(cfg.query.mode, Mode::Aggressive);
        assert_eq!(cfg.role("backend-engineer").unwrap().domains, ["api"]);
        assert_eq!(cfg.data_dir, dir.path().join("data"));
    }

    #[test]
    fn errors_carry_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memd.toml");
        std::fs::write(&path, "roots = []\n[query]\nmode = \"wild\"\n").unwrap();
        let err = Config::load(&Overrides {
            config: Some(path),
            ..Overrides::default()
        })
        .unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("memd.toml:3:"), "{shown}");
        let missing = Config::load(&Overrides {
            config: Some(dir.path().join("absent.toml")),
            ..Overrides::default()
        });
        assert!(matches!(missing, Err(ConfigError::Read { .. })));
    }
}

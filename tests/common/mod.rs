//! Helpers shared by the integration tests: run the real `memd` binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The example config shipped in `config/`.
pub fn example_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config/memd.toml")
}

/// A `memd` command with a clean environment for paths.
pub fn memd() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memd"));
    cmd.env_remove("MEMD_CONFIG").env_remove("MEMD_DATA_DIR");
    cmd
}

/// Runs `memd` with `args`; panics if it could not be started.
pub fn run(args: &[&str]) -> Output {
    memd().args(args).output().expect("memd runs")
}

/// A temporary directory with an empty config (no default roots), so a test
/// sees only the roots it adds.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("memd.toml"), "roots = []\n").unwrap();
        std::fs::create_dir_all(dir.path().join("knowledge")).unwrap();
        Sandbox { dir }
    }

    pub fn config(&self) -> String {
        self.dir.path().join("memd.toml").display().to_string()
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("knowledge")
    }

    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// Runs `memd query` over this sandbox's root with `args`.
    pub fn query(&self, args: &[&str]) -> Output {
        let root = self.root().display().to_string();
        let config = self.config();
        let mut all = vec![
            "query",
            "--config",
            config.as_str(),
            "--root",
            root.as_str(),
        ];
        all.extend_from_slice(args);
        run(&all)
    }
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

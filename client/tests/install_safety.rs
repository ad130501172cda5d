//! `memctl install` never damages, exposes or takes over a file it was not
//! meant to write: links planted in a cloned repository, files it cannot
//! read, private files, special files, read-only files, a later step that
//! fails. Each case is what a review found on the install before memd's
//! safe write path; each runs the real `memctl`.

use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};

/// `memctl install` with `HOME` at `home` and no Codex on the `PATH`.
fn install(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memctl"))
        .arg("install")
        .arg("--no-service")
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("PATH", "/usr/bin:/bin")
        .env_remove("MEMD_SOCKET")
        .output()
        .unwrap()
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o777
}

/// Every name in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The user's Claude Code settings and `~/.claude.json`, as they were
/// before a project install.
fn home_with_settings() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        "{\"model\": \"opus\"}\n",
    )
    .unwrap();
    std::fs::write(
        home.path().join(".claude.json"),
        "{\"oauthAccount\": {\"token\": \"secret\"}}\n",
    )
    .unwrap();
    std::fs::write(home.path().join(".bashrc"), "export PATH\n").unwrap();
    home
}

#[test]
fn a_link_planted_where_the_temporary_file_went_is_not_written_through() {
    let home = home_with_settings();
    let repo = home.path().join("cloned");
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    // The old install wrote `settings.memd-tmp` and renamed it: a cloned
    // repository could commit a link there.
    symlink(
        home.path().join(".claude/settings.json"),
        repo.join(".claude/settings.memd-tmp"),
    )
    .unwrap();
    symlink(
        home.path().join(".bashrc"),
        repo.join(".claude/settings.json.memd-tmp"),
    )
    .unwrap();
    let out = install(home.path(), &["--project", repo.to_str().unwrap()]);
    assert!(out.status.success(), "{}", said(&out));
    assert_eq!(
        std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap(),
        "{\"model\": \"opus\"}\n"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join(".bashrc")).unwrap(),
        "export PATH\n"
    );
    let written = repo.join(".claude/settings.json");
    assert!(std::fs::symlink_metadata(&written).unwrap().is_file());
    assert!(std::fs::read_to_string(&written)
        .unwrap()
        .contains("hook claude UserPromptSubmit"));
    assert_eq!(
        names(&repo.join(".claude")),
        [
            "settings.json",
            "settings.json.memd-tmp",
            "settings.memd-tmp"
        ],
        "no temporary file is left"
    );
}

#[test]
fn a_project_install_never_follows_a_link_out_of_the_repository() {
    let home = home_with_settings();
    // The project's settings file is a link to the user's account file.
    let repo = home.path().join("one");
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    symlink(
        home.path().join(".claude.json"),
        repo.join(".claude/settings.json"),
    )
    .unwrap();
    let out = install(home.path(), &["--project", repo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("leads out of"), "{}", said(&out));
    assert_eq!(
        names(&repo.join(".claude")),
        ["settings.json"],
        "no copy, no backup"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join(".claude.json")).unwrap(),
        "{\"oauthAccount\": {\"token\": \"secret\"}}\n"
    );
    // The project's `.claude` is a link to the user's.
    let repo = home.path().join("two");
    std::fs::create_dir_all(&repo).unwrap();
    symlink(home.path().join(".claude"), repo.join(".claude")).unwrap();
    let out = install(home.path(), &["--project", repo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("leads out of"), "{}", said(&out));
    assert_eq!(
        std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap(),
        "{\"model\": \"opus\"}\n"
    );
    assert_eq!(names(&home.path().join(".claude")), ["settings.json"]);
    // A dangling link to where a file would be created is refused too.
    let repo = home.path().join("three");
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    symlink(
        home.path().join("planted.json"),
        repo.join(".claude/settings.json"),
    )
    .unwrap();
    let out = install(home.path(), &["--project", repo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(!home.path().join("planted.json").exists());
}

#[test]
fn a_file_that_cannot_be_read_stops_the_install_and_is_left_as_it_is() {
    let home = tempfile::tempdir().unwrap();
    let account = home.path().join(".claude.json");
    // Invalid UTF-8.
    std::fs::write(&account, b"{\"name\": \"caf\xe9\"}\n").unwrap();
    let out = install(home.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(
        said(&out).contains(".claude.json: not UTF-8"),
        "{}",
        said(&out)
    );
    assert_eq!(
        std::fs::read(&account).unwrap(),
        b"{\"name\": \"caf\xe9\"}\n"
    );
    // Checked before anything is written: the other files were not.
    assert!(!home.path().join(".claude").exists(), "{}", said(&out));
    assert!(!home.path().join(".codex").exists());
    // Another user's file (as `sudo claude` leaves it): as root, a file of
    // another uid; as anyone else, one that cannot be read.
    std::fs::write(&account, "{\"numStartups\": 3}\n").unwrap();
    std::fs::set_permissions(&account, std::fs::Permissions::from_mode(0o600)).unwrap();
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        std::os::unix::fs::chown(&account, Some(65534), Some(65534)).unwrap();
    } else {
        std::fs::set_permissions(&account, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    let out = install(home.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    let why = if root {
        "belongs to another user"
    } else {
        "cannot be read"
    };
    assert!(said(&out).contains(why), "{}", said(&out));
    assert!(!home.path().join(".claude").exists());
    std::fs::set_permissions(&account, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(
        std::fs::read_to_string(&account).unwrap(),
        "{\"numStartups\": 3}\n"
    );
}

#[test]
fn private_files_stay_private_and_backups_too() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    let files = [
        ".claude.json",
        ".claude/settings.json",
        ".codex/config.toml",
    ];
    for (file, text) in files.iter().zip(["{}\n", "{}\n", "model = \"o3\"\n"]) {
        let path = home.path().join(file);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let out = install(home.path(), &[]);
    assert!(out.status.success(), "{}", said(&out));
    for file in files {
        let path = home.path().join(file);
        assert_eq!(mode(&path), 0o600, "{file}");
        let dir = path.parent().unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let backups: Vec<String> = names(dir)
            .into_iter()
            .filter(|n| n.starts_with(&format!("{name}.memd-backup-")))
            .collect();
        assert_eq!(backups.len(), 1, "{file}: {backups:?}");
        assert_eq!(mode(&dir.join(&backups[0])), 0o600, "{file}'s backup");
    }
    // Files memd creates in the user's configuration are private too.
    assert_eq!(mode(&home.path().join(".codex/hooks.json")), 0o600);
}

#[test]
fn a_settings_file_kept_in_a_dotfiles_repository_is_edited_where_it_is() {
    let home = tempfile::tempdir().unwrap();
    let real = home.path().join("dotfiles/claude/settings.json");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "{\"model\": \"opus\"}\n").unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    let link = home.path().join(".claude/settings.json");
    symlink(&real, &link).unwrap();
    let out = install(home.path(), &[]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .contains("hook claude UserPromptSubmit"));
    // A link to a file that is not the user's is refused.
    let theirs = home.path().join("theirs.json");
    std::fs::write(&theirs, "{}\n").unwrap();
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
        std::fs::remove_file(&link).unwrap();
        symlink(&theirs, &link).unwrap();
        let out = install(home.path(), &[]);
        assert_eq!(out.status.code(), Some(2), "{}", said(&out));
        assert!(said(&out).contains("symbolic link"), "{}", said(&out));
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "{}\n");
    } else {
        eprintln!("skipped the other user's link: needs root to make a file of another uid");
    }
}

#[test]
fn special_and_read_only_files_are_refused_without_hanging_or_litter() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    let settings = home.path().join(".claude/settings.json");
    // A FIFO: opened without blocking, refused.
    let c = std::ffi::CString::new(settings.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let out = install(home.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("a FIFO"), "{}", said(&out));
    std::fs::remove_file(&settings).unwrap();
    // A directory: refused, and nothing left beside it.
    std::fs::create_dir(&settings).unwrap();
    let out = install(home.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("a directory"), "{}", said(&out));
    assert_eq!(names(&home.path().join(".claude")), ["settings.json"]);
    std::fs::remove_dir(&settings).unwrap();
    // Read-only, and the last file the install comes to: refused before
    // anything is written or backed up.
    std::fs::write(&settings, "{}\n").unwrap();
    let account = home.path().join(".claude.json");
    std::fs::write(&account, "{}\n").unwrap();
    std::fs::set_permissions(&account, std::fs::Permissions::from_mode(0o400)).unwrap();
    let out = install(home.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(
        said(&out).contains(".claude.json: read-only"),
        "{}",
        said(&out)
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{}\n");
    assert!(!home.path().join(".codex").exists(), "{}", said(&out));
    assert_eq!(
        names(home.path())
            .iter()
            .filter(|n| n.contains("memd-backup"))
            .count(),
        0
    );
    std::fs::remove_file(&account).unwrap();
    // Read-only: respected, and said.
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = install(home.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("read-only"), "{}", said(&out));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{}\n");
    assert_eq!(mode(&settings), 0o444);
}

#[test]
fn codex_config_in_every_valid_form_stays_valid_and_crlf_stays_crlf() {
    for mine in [
        "features.web_search = true\r\nmodel = \"o3\"\r\n",
        "[features]\n\"web_search\" = true\n",
        "notes = \"\"\"\n[features]\nhooks = false\n\"\"\"\n",
        "[projects.\"/src/#1\"]\ntrust_level = \"trusted\"\n",
    ] {
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join(".codex/config.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(&config, mine).unwrap();
        let out = install(home.path(), &[]);
        assert!(out.status.success(), "{}", said(&out));
        let now = std::fs::read_to_string(&config).unwrap();
        let read: toml::Table = now.parse().unwrap_or_else(|e| panic!("{e}\n{now}"));
        assert_eq!(read["features"]["hooks"].as_bool(), Some(true), "{now}");
        let old: toml::Table = mine.parse().unwrap();
        for (key, value) in &old {
            if key != "features" {
                assert_eq!(read.get(key), Some(value), "{now}");
            }
        }
        if mine.contains("\r\n") {
            assert!(!now.replace("\r\n", "").contains('\n'), "{now:?}");
        }
    }
}

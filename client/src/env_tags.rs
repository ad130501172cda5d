//! Environment tags from a working directory: the languages and frameworks
//! its repository's manifests name, the repository's name, and the OS.
//! Only small files at the repository root are read, so this costs well
//! under a millisecond.

use std::path::{Path, PathBuf};

/// Largest manifest read.
const MAX_MANIFEST_BYTES: u64 = 256 * 1024;

/// A manifest file, the language it means, and the frameworks looked for
/// in it (as spelled in the manifest, and the tag each gives).
type Manifest = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// Frameworks named in Python manifests.
const PYTHON_FRAMEWORKS: &[(&str, &str)] = &[
    ("django", "django"),
    ("flask", "flask"),
    ("fastapi", "fastapi"),
    ("pytest", "pytest"),
    ("pandas", "pandas"),
    ("numpy", "numpy"),
    ("sqlalchemy", "sqlalchemy"),
];

/// The manifests memctl knows.
const MANIFESTS: &[Manifest] = &[
    (
        "Cargo.toml",
        "rust",
        &[
            ("tokio", "tokio"),
            ("axum", "axum"),
            ("actix-web", "actix"),
            ("rocket", "rocket"),
            ("serde", "serde"),
            ("clap", "clap"),
            ("diesel", "diesel"),
            ("sqlx", "sqlx"),
        ],
    ),
    (
        "package.json",
        "javascript",
        &[
            ("\"typescript\"", "typescript"),
            ("\"react\"", "react"),
            ("\"next\"", "nextjs"),
            ("\"vue\"", "vue"),
            ("\"svelte\"", "svelte"),
            ("\"@angular/core\"", "angular"),
            ("\"express\"", "express"),
            ("\"fastify\"", "fastify"),
            ("\"@nestjs/core\"", "nestjs"),
            ("\"vite\"", "vite"),
            ("\"jest\"", "jest"),
            ("\"vitest\"", "vitest"),
            ("\"tailwindcss\"", "tailwind"),
            ("\"prisma\"", "prisma"),
        ],
    ),
    ("pyproject.toml", "python", PYTHON_FRAMEWORKS),
    ("requirements.txt", "python", PYTHON_FRAMEWORKS),
    (
        "go.mod",
        "go",
        &[
            ("gin-gonic/gin", "gin"),
            ("labstack/echo", "echo"),
            ("gofiber/fiber", "fiber"),
        ],
    ),
    (
        "Gemfile",
        "ruby",
        &[
            ("rails", "rails"),
            ("sinatra", "sinatra"),
            ("rspec", "rspec"),
        ],
    ),
    (
        "pom.xml",
        "java",
        &[("spring-boot", "spring"), ("junit", "junit")],
    ),
    (
        "build.gradle",
        "java",
        &[("spring-boot", "spring"), ("junit", "junit")],
    ),
];

/// The repository containing `dir`: the nearest ancestor with `.git` (or
/// `.memd`); `None` outside any.
pub fn repository_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists() || d.join(".memd").exists())
        .filter(|d| d.parent().is_some())
        .map(Path::to_path_buf)
}

/// The environment tags of `cwd`, sorted and distinct.
pub fn tags(cwd: &Path) -> Vec<String> {
    let root = repository_of(cwd).unwrap_or_else(|| cwd.to_path_buf());
    let mut tags = Vec::new();
    for (file, language, frameworks) in MANIFESTS {
        let path = root.join(file);
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        tags.push(language.to_string());
        if meta.len() > MAX_MANIFEST_BYTES {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .unwrap_or_default()
            .to_lowercase();
        for (needle, tag) in frameworks.iter() {
            if text.contains(needle) {
                tags.push(tag.to_string());
            }
        }
    }
    if root.join("tsconfig.json").exists() {
        tags.push("typescript".into());
    }
    if root.join("Dockerfile").exists()
        || root.join("compose.yaml").exists()
        || root.join("docker-compose.yml").exists()
    {
        tags.push("docker".into());
    }
    if let Some(name) = root.file_name().and_then(|n| n.to_str()) {
        if repository_of(cwd).is_some() {
            tags.push(name.to_lowercase());
        }
    }
    tags.push(std::env::consts::OS.to_string());
    tags.sort();
    tags.dedup();
    tags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_frameworks_repo_and_os() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("payflow-api");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/routes")).unwrap();
        std::fs::write(
            repo.join("package.json"),
            r#"{"dependencies": {"fastify": "^5", "zod": "^3"}, "devDependencies": {"typescript": "^5", "vitest": "^2"}}"#,
        )
        .unwrap();
        std::fs::write(repo.join("Dockerfile"), "FROM node:22\n").unwrap();
        let tags = tags(&repo.join("src/routes"));
        for want in [
            "javascript",
            "typescript",
            "fastify",
            "vitest",
            "docker",
            "payflow-api",
            std::env::consts::OS,
        ] {
            assert!(tags.contains(&want.to_string()), "{want} in {tags:?}");
        }
        assert!(!tags.contains(&"react".to_string()));
    }

    #[test]
    fn outside_a_repository_only_the_os() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(tags(dir.path()), [std::env::consts::OS]);
    }
}

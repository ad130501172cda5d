//! Text that looks like a credential, refused before memd writes it into a
//! knowledge file (`memctl add`, the MCP `remember`): those files are
//! committed and pulled by the whole team, so a key pasted into a lesson
//! would be published with it.
//!
//! A rule set memd maintains rather than a scanner crate: the scanner
//! crates found are CLIs built around git history and networking (tens of
//! dependencies) or young; what a lesson may hold is short text, and a
//! dozen rules over the `regex` crate (already in the tree) cover the
//! credentials that get pasted: private keys, the major providers' tokens
//! (formats with a fixed prefix, so near-misses are rare), passwords in
//! URLs, JSON Web Tokens, and a secret-named setting given a literal value.
//! Each rule has a test, and so has a near-miss that must pass (a
//! placeholder, an environment variable, prose about keys).

use std::sync::LazyLock;

use regex::Regex;

/// One rule: what it finds, as people call it, and how.
struct Rule {
    name: &'static str,
    pattern: &'static str,
}

/// The rules, most specific first (the first that matches names the find).
const RULES: &[Rule] = &[
    Rule {
        name: "a private key",
        pattern: r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY(?: BLOCK)?-----",
    },
    Rule {
        name: "an AWS access key id",
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[0-9A-Z]{16}\b",
    },
    Rule {
        name: "a GitHub token",
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})\b",
    },
    Rule {
        name: "a GitLab token",
        pattern: r"\bglpat-[A-Za-z0-9_-]{20,}",
    },
    Rule {
        name: "a Slack token",
        pattern: r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    },
    Rule {
        name: "a Slack webhook",
        pattern: r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}",
    },
    Rule {
        name: "a Stripe key",
        pattern: r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
    },
    Rule {
        name: "a Google API key",
        pattern: r"\bAIza[0-9A-Za-z_-]{35}\b",
    },
    Rule {
        name: "an Anthropic or OpenAI API key",
        pattern: r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}",
    },
    Rule {
        name: "a JSON Web Token",
        pattern: r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
    },
    Rule {
        name: "a password in a URL",
        // scheme://user:password@ with a literal password: not `${VAR}`,
        // `$VAR`, `<password>`, `{password}`, `***` or `...`.
        pattern: r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]*:(?:[^\s/@$<{*.%][^\s/@]*)@[^\s/@]",
    },
    Rule {
        name: "a secret-named setting with a literal value",
        // password = "hunter2hunter2" / api_key: 'Zx81...'; the value quoted,
        // 12 or more characters with a letter and a digit, no spaces.
        pattern: r#"(?i)\b[a-z0-9_.-]*(?:password|passwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|private[_-]?key)[a-z0-9_.-]*["']?\s*[:=]\s*["']([^"'\s$<{]{12,})["']"#,
    },
];

/// The rules, compiled once.
static COMPILED: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|r| (r.name, Regex::new(r.pattern).expect("a valid rule")))
        .collect()
});

/// What looks like a credential in `text`: the rule's name, or `None`.
/// A secret-named setting counts only when its value mixes letters and
/// digits (a literal, not a word or a name).
pub fn find(text: &str) -> Option<&'static str> {
    for (name, regex) in COMPILED.iter() {
        for found in regex.captures_iter(text) {
            let value = found.get(1).map_or(found[0].as_ref(), |v| v.as_str());
            let literal = found.get(1).is_none()
                || (value.bytes().any(|b| b.is_ascii_digit())
                    && value.bytes().any(|b| b.is_ascii_alphabetic()));
            if literal {
                return Some(name);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_finds_what_it_is_for() {
        let cases = [
            ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow...", "a private key"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----", "a private key"),
            ("-----BEGIN PRIVATE KEY-----", "a private key"),
            ("export AWS_ACCESS_KEY_ID=AKIAQ3EGUAYVXN7LBK2Q", "an AWS access key id"),
            ("use ghp_R9k2LmQ8vX4tY7wZ1aB3cD5eF6gH8iJ0kL2m for the API", "a GitHub token"),
            ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX", "a GitHub token"),
            ("glpat-xY7zK2mN9pQ4rS6tV8wX", "a GitLab token"),
            ("SLACK_BOT_TOKEN=xoxb-1234567890-abcdefghij", "a Slack token"),
            ("https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsT", "a Slack webhook"),
            ("stripe.api_key = sk_live_51HxYzAbCdEfGhIjKl", "a Stripe key"),
            ("key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "a Google API key"),
            ("ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "an Anthropic or OpenAI API key"),
            ("sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd", "an Anthropic or OpenAI API key"),
            ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "a JSON Web Token"),
            ("DATABASE_URL=postgres://app:s3cretPass@db.internal:5432/app", "a password in a URL"),
            ("connect with redis://:hunter2@cache:6379", "a password in a URL"),
            ("password = \"Tr0ub4dor&3xyz\"", "a secret-named setting with a literal value"),
            ("\"client_secret\": \"9f8e7d6c5b4a3210fedc\"", "a secret-named setting with a literal value"),
            ("API_KEY: 'ZK81mQp02LxvY7'", "a secret-named setting with a literal value"),
        ];
        for (text, rule) in cases {
            assert_eq!(find(text), Some(rule), "{text}");
        }
    }

    #[test]
    fn near_misses_pass() {
        for text in [
            // Placeholders and variables instead of the secret.
            "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
            "postgres://user:<password>@localhost/db",
            "postgres://user:$PGPASS@localhost/db",
            "redis://user:***@cache",
            "password = os.environ[\"DB_PASSWORD\"]",
            "api_key: \"${OPENAI_API_KEY}\"",
            "password = \"changeme\"",
            "secret = \"SECRET_KEY_BASE\"",
            // Prose and code about keys.
            "Rotate the AWS access key when a developer leaves",
            "Never commit the private key; load it from the keychain",
            "The GitHub token needs the repo scope",
            "sk-learn is imported as sklearn",
            "Use ghp_ tokens only in CI secrets, never in the repository",
            "A URL like https://example.com/a:b@c is fine in a path",
            "git@github.com:org/repo.git uses SSH, not a password",
            "eyJ is how a base64 JSON object starts",
            "AKIA is the prefix of long-term AWS key ids",
            "Set `password` in the [database] section of config.toml",
        ] {
            assert_eq!(find(text), None, "{text}");
        }
    }
}

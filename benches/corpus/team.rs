//! A lesson-heavy corpus written the way one product team writes lessons
//! (issue 32): fifteen domains, each with its own components, commands,
//! paths and problems, reused across thousands of lessons, so the
//! vocabulary is narrow and shared; tags on every lesson; a few pinned.
//! Prompts are phrased as an engineer asks an agent in one of the team's
//! repositories, and carry the tags a hook derives there.

use std::fmt::Write as _;
use std::path::Path;

use super::Rng;

/// A domain of the team's product: its parts and its troubles.
struct Domain {
    name: &'static str,
    components: [&'static str; 4],
    commands: [&'static str; 3],
    paths: [&'static str; 3],
    problems: [&'static str; 4],
}

const DOMAINS: [Domain; 15] = [
    Domain {
        name: "billing",
        components: [
            "billing-svc",
            "invoice-worker",
            "ledger-db",
            "stripe-webhook",
        ],
        commands: [
            "pnpm test:billing",
            "make migrate-ledger",
            "kubectl rollout restart deploy/billing-svc",
        ],
        paths: [
            "services/billing/src/invoice.ts",
            "services/billing/src/ledger.ts",
            "services/billing/migrations",
        ],
        problems: [
            "double charges after a webhook retry",
            "invoices stuck in pending",
            "ledger totals drift from stripe",
            "proration off by one day",
        ],
    },
    Domain {
        name: "auth",
        components: ["auth-svc", "session-store", "oauth-proxy", "token-signer"],
        commands: [
            "pnpm test:auth",
            "make rotate-keys",
            "kubectl logs deploy/auth-svc",
        ],
        paths: [
            "services/auth/src/session.ts",
            "services/auth/src/oauth.ts",
            "services/auth/keys",
        ],
        problems: [
            "refresh tokens rejected after a deploy",
            "sessions dropped on redis failover",
            "oauth callback loops",
            "clock skew breaks token expiry",
        ],
    },
    Domain {
        name: "search",
        components: [
            "search-api",
            "indexer-job",
            "opensearch-cluster",
            "query-parser",
        ],
        commands: [
            "pnpm test:search",
            "make reindex",
            "curl localhost:9200/_cat/indices",
        ],
        paths: [
            "services/search/src/query.ts",
            "services/search/src/indexer.ts",
            "infra/opensearch",
        ],
        problems: [
            "stale results after a product update",
            "reindex runs out of heap",
            "synonyms ignored for plural terms",
            "timeouts on wildcard queries",
        ],
    },
    Domain {
        name: "notifications",
        components: [
            "notify-svc",
            "email-sender",
            "push-gateway",
            "template-store",
        ],
        commands: [
            "pnpm test:notify",
            "make preview-emails",
            "kubectl scale deploy/notify-svc",
        ],
        paths: [
            "services/notify/src/email.ts",
            "services/notify/templates",
            "services/notify/src/push.ts",
        ],
        problems: [
            "emails sent twice on retry",
            "push tokens expire silently",
            "templates miss translations",
            "bounce webhooks ignored",
        ],
    },
    Domain {
        name: "checkout",
        components: [
            "checkout-web",
            "cart-svc",
            "tax-calculator",
            "address-validator",
        ],
        commands: ["pnpm test:checkout", "pnpm e2e checkout", "make seed-carts"],
        paths: [
            "apps/checkout/src/Cart.tsx",
            "services/cart/src/tax.ts",
            "apps/checkout/src/Address.tsx",
        ],
        problems: [
            "cart totals differ from the order",
            "tax rounding per line item",
            "address form loses state on back",
            "coupon applied twice",
        ],
    },
    Domain {
        name: "inventory",
        components: [
            "inventory-svc",
            "stock-sync",
            "warehouse-feed",
            "reservation-lock",
        ],
        commands: [
            "pnpm test:inventory",
            "make sync-stock",
            "kubectl exec deploy/inventory-svc -- stock-check",
        ],
        paths: [
            "services/inventory/src/stock.ts",
            "services/inventory/src/reserve.ts",
            "services/inventory/feeds",
        ],
        problems: [
            "oversold items under load",
            "reservations never released",
            "feed import blocks the table",
            "negative stock after a refund",
        ],
    },
    Domain {
        name: "analytics",
        components: [
            "events-collector",
            "clickhouse-sink",
            "dashboard-api",
            "sessionizer",
        ],
        commands: [
            "pnpm test:analytics",
            "make backfill-events",
            "clickhouse-client --query",
        ],
        paths: [
            "services/analytics/src/collector.ts",
            "services/analytics/sql",
            "apps/dashboard/src/Charts.tsx",
        ],
        problems: [
            "events lost on a collector restart",
            "backfill duplicates rows",
            "dashboards slow on wide ranges",
            "time zones shift daily totals",
        ],
    },
    Domain {
        name: "onboarding",
        components: ["signup-web", "invite-svc", "kyc-check", "welcome-flow"],
        commands: [
            "pnpm test:onboarding",
            "pnpm e2e signup",
            "make fixtures-users",
        ],
        paths: [
            "apps/signup/src/Signup.tsx",
            "services/invite/src/invite.ts",
            "services/kyc/src/check.ts",
        ],
        problems: [
            "invites expire too early",
            "kyc provider times out",
            "signup form double submits",
            "welcome emails go to spam",
        ],
    },
    Domain {
        name: "payments",
        components: ["payments-svc", "payout-worker", "fx-rates", "refund-queue"],
        commands: [
            "pnpm test:payments",
            "make replay-payouts",
            "kubectl rollout status deploy/payments-svc",
        ],
        paths: [
            "services/payments/src/payout.ts",
            "services/payments/src/refund.ts",
            "services/payments/src/fx.ts",
        ],
        problems: [
            "refunds processed twice",
            "payouts fail on weekends",
            "fx rates cached too long",
            "partial captures not reconciled",
        ],
    },
    Domain {
        name: "admin",
        components: ["admin-web", "audit-log", "role-editor", "feature-flags"],
        commands: ["pnpm test:admin", "make export-audit", "pnpm flags:sync"],
        paths: [
            "apps/admin/src/Roles.tsx",
            "services/audit/src/log.ts",
            "config/flags.yaml",
        ],
        problems: [
            "audit entries missing actor",
            "role changes need a relogin",
            "flags differ between regions",
            "exports time out for big tenants",
        ],
    },
    Domain {
        name: "mobile",
        components: ["mobile-app", "api-client", "offline-cache", "release-train"],
        commands: ["pnpm test:mobile", "pnpm expo build", "make bump-version"],
        paths: [
            "apps/mobile/src/api.ts",
            "apps/mobile/src/cache.ts",
            "apps/mobile/app.json",
        ],
        problems: [
            "offline edits overwrite the server",
            "builds fail on a new xcode",
            "deep links open the wrong screen",
            "api client retries forever",
        ],
    },
    Domain {
        name: "gateway",
        components: [
            "api-gateway",
            "rate-limiter",
            "cors-policy",
            "request-logger",
        ],
        commands: [
            "pnpm test:gateway",
            "make load-test",
            "kubectl describe ingress api",
        ],
        paths: [
            "services/gateway/src/limits.ts",
            "services/gateway/src/cors.ts",
            "infra/ingress.yaml",
        ],
        problems: [
            "rate limits hit internal callers",
            "cors preflight fails on staging",
            "logs leak auth headers",
            "timeouts shorter than upstream",
        ],
    },
    Domain {
        name: "deploy",
        components: [
            "ci-pipeline",
            "helm-charts",
            "canary-controller",
            "secrets-manager",
        ],
        commands: [
            "make deploy-staging",
            "helm upgrade --install",
            "pnpm ci:affected",
        ],
        paths: [
            ".github/workflows/deploy.yml",
            "infra/helm/values.yaml",
            "infra/secrets",
        ],
        problems: [
            "canary never promotes",
            "secrets not mounted after rotation",
            "cache misses slow every build",
            "migrations race the rollout",
        ],
    },
    Domain {
        name: "pipeline",
        components: [
            "etl-runner",
            "kafka-topics",
            "schema-registry",
            "warehouse-loader",
        ],
        commands: [
            "make run-etl",
            "kafka-console-consumer --topic orders",
            "pnpm test:pipeline",
        ],
        paths: [
            "pipelines/orders/etl.py",
            "pipelines/schemas",
            "pipelines/loader/load.py",
        ],
        problems: [
            "consumer lag after a rebalance",
            "schema change breaks the loader",
            "late events dropped",
            "duplicate rows in the warehouse",
        ],
    },
    Domain {
        name: "frontend",
        components: ["web-shell", "design-system", "state-store", "i18n-bundle"],
        commands: ["pnpm test:web", "pnpm storybook", "pnpm lint --fix"],
        paths: [
            "apps/web/src/store.ts",
            "packages/ui/src/Button.tsx",
            "apps/web/locales",
        ],
        problems: [
            "hydration mismatch on dates",
            "bundle size grows each release",
            "translations missing at runtime",
            "state resets on route change",
        ],
    },
];

/// What a lesson says to do about a problem.
const FIXES: [&str; 8] = [
    "make the handler idempotent with the event id as the key",
    "add a unique constraint and retry on conflict",
    "set an explicit timeout below the upstream one",
    "run the migration before the rollout, not after",
    "invalidate the cache when the record changes",
    "store instants in UTC and convert at the edge",
    "hold the lock only around the write",
    "log the request id, never the headers",
];

/// Technology tags: every lesson has some.
const TECH: [&str; 8] = [
    "typescript",
    "react",
    "node",
    "postgres",
    "redis",
    "kafka",
    "kubernetes",
    "python",
];

/// Lessons a file holds.
const PER_FILE: usize = 1_000;

/// Writes `lessons` lessons across files under `dir` (1,000 a file; five
/// files hold a pinned lesson each).
pub fn write(dir: &Path, lessons: usize, rng: &mut Rng) {
    let files = lessons.div_ceil(PER_FILE);
    for file in 0..files {
        let n = PER_FILE.min(lessons - file * PER_FILE);
        let mut text = String::from("lessons:\n");
        for i in 0..n {
            let d = &DOMAINS[rng.zipf(DOMAINS.len())];
            let component = d.components[rng.below(4)];
            let problem = d.problems[rng.below(4)];
            let fix = FIXES[rng.below(FIXES.len())];
            let lesson = match rng.below(3) {
                0 => format!(
                    "When {component} shows {problem}, {fix}; check it with `{}` and look at {}.",
                    d.commands[rng.below(3)],
                    d.paths[rng.below(3)]
                ),
                1 => format!(
                    "In {} the {problem} came from {component}: {fix} before touching {}.",
                    d.name,
                    d.paths[rng.below(3)]
                ),
                _ => format!(
                    "{component} {problem}: {fix}, then run `{}` for {}.",
                    d.commands[rng.below(3)],
                    d.components[rng.below(4)]
                ),
            };
            let tags = [
                d.name,
                TECH[rng.below(TECH.len())],
                TECH[rng.below(TECH.len())],
            ];
            let pinned = file < 5 && i == 0;
            let _ = write!(
                text,
                "  - id: T{file}-{i}\n    text: {lesson:?}\n    tags: [{}]\n    pinned: {pinned}\n",
                tags.join(", ")
            );
        }
        std::fs::write(dir.join(format!("team-{file}.yaml")), text).unwrap();
    }
}

/// A prompt as an engineer of the team asks it, in a repository with a
/// `package.json` of react and typescript (the tags a hook derives).
pub fn prompt(rng: &mut Rng) -> (String, Vec<String>) {
    let d = &DOMAINS[rng.zipf(DOMAINS.len())];
    let component = d.components[rng.below(4)];
    let problem = d.problems[rng.below(4)];
    let path = d.paths[rng.below(3)];
    let task = match rng.below(4) {
        0 => format!(
            "We're seeing {problem} in {component} again, can you look at {path} and fix it?"
        ),
        1 => format!(
            "Customers report {problem}. Find out why {component} does this and propose a fix."
        ),
        2 => format!("Add a test for {problem} in {path} and make it pass."),
        _ => format!("Why does {component} have {problem} since the last deploy? Check {path}."),
    };
    (task, vec!["react".into(), "typescript".into()])
}

/// The team's repository, where its prompts are asked.
pub const REPO: &str = "/work/shop";

/// A prompt of the team's ([`prompt`]) as the `n`th session's hook asks
/// it, in the team's repository ([`REPO`]).
pub fn query(rng: &mut Rng, n: usize) -> memd::protocol::Query {
    let (task, tags) = prompt(rng);
    memd::protocol::Query {
        task,
        tags,
        repo: Some(REPO.into()),
        cwd: Some(REPO.into()),
        session_id: Some(format!("team-{n}")),
        now: Some("2026-11-22T12:00:00Z".into()),
        ..memd::protocol::Query::default()
    }
}

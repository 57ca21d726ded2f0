//! The ranking benchmark's memory and questions.
//!
//! Answers are records written by hand, each with a question a developer
//! would ask in their own words (or a bug report they would paste); the
//! right answer is known by construction. Around them, a deterministic
//! generator writes several hundred records of ordinary coding work over the
//! same components and vocabulary: short log-like titles ("Edited
//! src/upload/handler.rs", "Fix failing session test"), long narratives,
//! identifiers in every style, turn summaries, and decisions that a later
//! decision replaced, so that common words are everywhere and only the
//! selective ones point to the answer.

use mnemo_store::memory::{NewObservation, NewSummary};

/// A record written by hand that answers some question.
pub struct Answer {
    pub key: &'static str,
    pub kind: &'static str,
    pub title: &'static str,
    pub narrative: &'static str,
    pub facts: &'static [&'static str],
    pub files: &'static [&'static str],
}

/// A question and the key of the answer that answers it.
pub struct Question {
    pub text: &'static str,
    pub answer: &'static str,
}

pub const ANSWERS: &[Answer] = &[
    Answer {
        key: "upload-413",
        kind: "bugfix",
        title: "Uploads over 10 MB rejected with 413: raised client_max_body_size",
        narrative: "Large avatar and attachment uploads failed with HTTP 413 Request Entity Too Large. nginx defaulted client_max_body_size to 1m; set it to 50m in the site config and matched uploadLimit in config/storage.yaml.",
        facts: &[
            "nginx client_max_body_size is now 50m",
            "uploadLimit in storage.yaml must match nginx",
        ],
        files: &["deploy/nginx/site.conf", "config/storage.yaml"],
    },
    Answer {
        key: "sessions-redis",
        kind: "decision",
        title: "Session data kept in Redis with a 24h TTL",
        narrative: "Sessions are written to Redis keyed by the cookie id, expiring after 24 hours; fast and simple for now.",
        facts: &["session TTL is 24h"],
        files: &["src/session/store.rs"],
    },
    Answer {
        key: "sessions-postgres",
        kind: "decision",
        title: "Session data moves from Redis to Postgres",
        narrative: "Redis evictions logged users out under memory pressure. Sessions now live in the sessions table in Postgres, durable across restarts; expired rows are deleted by the nightly cleanup job.",
        facts: &[
            "sessions table replaces the Redis keys",
            "nightly job deletes expired sessions",
        ],
        files: &["src/session/store.rs", "migrations/0042_sessions.sql"],
    },
    Answer {
        key: "hash-bcrypt",
        kind: "decision",
        title: "Password hashing uses bcrypt with cost 12",
        narrative: "bcrypt is available everywhere and cost 12 takes about 250 ms on the login servers.",
        facts: &[],
        files: &["src/auth/password.rs"],
    },
    Answer {
        key: "hash-argon2",
        kind: "decision",
        title: "Password hashing switches from bcrypt to argon2id",
        narrative: "Security review asked for a memory-hard function. New hashes use argon2id (19 MiB, 2 iterations); bcrypt hashes are rehashed on the next successful login.",
        facts: &["argon2id parameters: m=19456, t=2, p=1"],
        files: &["src/auth/password.rs"],
    },
    Answer {
        key: "errors-text",
        kind: "decision",
        title: "API errors returned as plain text messages",
        narrative: "Handlers return the error message as text/plain with the status code.",
        facts: &[],
        files: &["api/src/errors.rs"],
    },
    Answer {
        key: "errors-problem",
        kind: "decision",
        title: "API errors returned as JSON problem details (RFC 7807)",
        narrative: "Clients could not tell validation errors apart; every error response is now application/problem+json with type, title, status and detail, and validation errors list the invalid fields.",
        facts: &["content type application/problem+json"],
        files: &["api/src/errors.rs"],
    },
    Answer {
        key: "parse-config",
        kind: "feature",
        title: "parseConfig reads TOML and applies environment overrides",
        narrative: "The settings file is parsed once at startup; APP_* environment variables override any key, and unknown keys are reported with their line number.",
        facts: &["APP_DATABASE_URL overrides database.url"],
        files: &["src/config/parseConfig.ts"],
    },
    Answer {
        key: "load-profile",
        kind: "refactor",
        title: "Split load_user_profile into fetch and render steps",
        narrative: "The profile page did network calls while rendering templates. fetch_profile_data gathers everything first, render_profile only formats it, which makes both testable.",
        facts: &[],
        files: &["app/users/profile_loader.py"],
    },
    Answer {
        key: "claim-race",
        kind: "bugfix",
        title: "Race in JobQueue.claimNext: two workers took the same job",
        narrative: "claimNext selected the oldest pending row and updated it in a second statement, so two workers could claim the same job and run it twice. It now claims with UPDATE ... RETURNING and FOR UPDATE SKIP LOCKED in one statement.",
        facts: &["claimNext uses SKIP LOCKED"],
        files: &["src/queue/claim.rs"],
    },
    Answer {
        key: "stripe-order",
        kind: "discovery",
        title: "Stripe webhooks can arrive out of order",
        narrative: "invoice.paid sometimes arrives before invoice.created. The webhook handler now upserts invoices by Stripe id and ignores events older than the stored state.",
        facts: &["webhook handler upserts by stripe invoice id"],
        files: &["billing/webhooks/stripe_handler.rb"],
    },
    Answer {
        key: "digest-tz",
        kind: "bugfix",
        title: "Daily digest used UTC midnight instead of the account's local day",
        narrative: "Accounts east of UTC got the previous day's numbers in their morning digest. The report window is now computed in the account's time zone.",
        facts: &["digest window uses account.time_zone"],
        files: &["reports/daily_digest.rb"],
    },
    Answer {
        key: "rate-limit",
        kind: "feature",
        title: "Token bucket rate limiting per API key",
        narrative: "Each API key gets a bucket of 100 tokens refilled at 100 per minute; requests beyond it get 429 with a Retry-After header.",
        facts: &[
            "limit: 100 requests per minute per key",
            "429 responses carry Retry-After",
        ],
        files: &["src/middleware/rate_limit.go"],
    },
    Answer {
        key: "vips-leak",
        kind: "bugfix",
        title: "Memory leak in the resize worker: decoded GIF frames never freed",
        narrative: "libvips kept every decoded frame of animated GIFs in its operation cache, so the resize worker's RSS grew until the kernel OOM killer stopped it. vips_cache_set_max(0) at startup and unref of each frame fixed it.",
        facts: &["vips_cache_set_max(0) in worker init"],
        files: &["services/resize/worker.c"],
    },
    Answer {
        key: "ci-cache",
        kind: "change",
        title: "CI caches the cargo registry and target directory between jobs",
        narrative: "Pipelines took 14 minutes, mostly recompiling dependencies. actions/cache keyed on Cargo.lock brings a warm run to 4 minutes.",
        facts: &["warm CI run: 4 minutes"],
        files: &[".github/workflows/ci.yml"],
    },
    Answer {
        key: "flaky-cents",
        kind: "bugfix",
        title: "Flaky test_checkout_total: float rounding of currency amounts",
        narrative: "Totals were summed as f64 and compared exactly; the result depended on item order. Amounts are now integer cents in a Money type.",
        facts: &["Money stores integer cents"],
        files: &["shop/checkout/totals.py", "tests/test_checkout.py"],
    },
    Answer {
        key: "flags-table",
        kind: "decision",
        title: "Feature flags live in a database table, toggled from the admin page",
        narrative: "Environment variables needed a redeploy to change. A flags table read through a 30 s cache lets support switch features on per account without deploying.",
        facts: &[],
        files: &["app/flags/store.ts"],
    },
    Answer {
        key: "indexer-skip",
        kind: "discovery",
        title: "Indexer silently skips documents larger than 1 MB",
        narrative: "ingest.py drops any document whose body exceeds MAX_DOC_BYTES without logging; big manuals never reached the index. It now chunks them into 512 KB parts.",
        facts: &["MAX_DOC_BYTES was 1 MB"],
        files: &["indexer/ingest.py"],
    },
    Answer {
        key: "ws-backoff",
        kind: "bugfix",
        title: "reconnectSocket retried instantly in a tight loop; exponential backoff added",
        narrative: "When the gateway restarted, every open tab reconnected immediately and forever, thousands of attempts per second. Backoff doubles from 500 ms up to 30 s with jitter.",
        facts: &["backoff capped at 30 s"],
        files: &["web/src/socket/reconnectSocket.ts"],
    },
    Answer {
        key: "pdf-typst",
        kind: "feature",
        title: "Invoice PDFs rendered from Typst templates",
        narrative: "wkhtmltopdf was unmaintained and slow; invoices are now rendered by typst from templates/invoice.typ, about 40 ms each.",
        facts: &[],
        files: &["billing/pdf/render.rs", "templates/invoice.typ"],
    },
    Answer {
        key: "de-plural",
        kind: "bugfix",
        title: "German plural forms missing in cart messages",
        narrative: "The de locale had only the 'other' form, so the cart showed '1 Artikel' and '2 Artikel' identically wrong for some strings. Added ICU plural rules for one and other.",
        facts: &[],
        files: &["locales/de.json"],
    },
    Answer {
        key: "orders-index",
        kind: "change",
        title: "Index on orders(customer_id, created_at)",
        narrative: "The order history query scanned the whole orders table for large customers (8 s). With the composite index it takes 12 ms.",
        facts: &["order history: 8 s to 12 ms"],
        files: &["migrations/0051_orders_customer_idx.sql"],
    },
    Answer {
        key: "samesite-loop",
        kind: "bugfix",
        title: "Login redirect loop with SameSite=Strict session cookie",
        narrative: "After the identity provider redirected back, the browser withheld the Strict cookie on the cross-site navigation, so the app saw no session and sent the user to sign in again, forever. The session cookie is now SameSite=Lax.",
        facts: &["session cookie SameSite=Lax"],
        files: &["src/auth/cookies.rs"],
    },
    Answer {
        key: "pool-exhausted",
        kind: "discovery",
        title: "Connection pool exhausted by long-running month-end report queries",
        narrative: "Finance reports held connections for minutes; web requests then failed with 'too many connections'. Reports now use a separate pool of 4 connections on the replica.",
        facts: &["reports use the replica pool"],
        files: &["config/database.yml"],
    },
    Answer {
        key: "deploy-dry-run",
        kind: "feature",
        title: "deploy --dry-run prints the plan without applying it",
        narrative: "The deploy command now has a --dry-run flag that lists the services, image tags and migrations it would apply, then exits.",
        facts: &[],
        files: &["cli/commands/deploy.go"],
    },
    Answer {
        key: "email-dup",
        kind: "bugfix",
        title: "Notification emails sent twice after a retried job",
        narrative: "The mailer job timed out after handing the message to the SMTP relay and was retried, sending it again. Each message now carries an idempotency key checked against sent_messages.",
        facts: &["sent_messages holds idempotency keys"],
        files: &["jobs/send_notification.rb"],
    },
    Answer {
        key: "logging-json",
        kind: "decision",
        title: "Structured JSON logs through tracing-subscriber; println banned in services",
        narrative: "Log lines must be machine-readable for the log pipeline. Every service initialises tracing-subscriber with the JSON formatter, and clippy denies print macros.",
        facts: &[],
        files: &["crates/telemetry/src/lib.rs"],
    },
    Answer {
        key: "histogram-units",
        kind: "bugfix",
        title: "Latency histogram buckets were in milliseconds instead of seconds",
        narrative: "Grafana dashboards showed request latency a thousand times too high: the exporter observed elapsed milliseconds into buckets declared in seconds. Observations are now in seconds.",
        facts: &[],
        files: &["src/metrics/exporter.rs"],
    },
    Answer {
        key: "retry-backoff",
        kind: "feature",
        title: "retryWithBackoff wraps calls to the shipping API",
        narrative: "The carrier's API returns 503 under load; calls now retry up to 5 times with jittered exponential delay.",
        facts: &[],
        files: &["src/shipping/httpClient.ts"],
    },
    Answer {
        key: "order-split",
        kind: "refactor",
        title: "OrderService split into OrderPricing and OrderFulfillment",
        narrative: "Pricing rules (discounts, taxes, coupons) move to OrderPricing; shipping and stock reservation to OrderFulfillment. OrderService is now a thin facade.",
        facts: &[],
        files: &[
            "src/orders/OrderPricing.java",
            "src/orders/OrderFulfillment.java",
        ],
    },
    Answer {
        key: "csv-bom",
        kind: "bugfix",
        title: "CSV import failed on a UTF-8 byte order mark in the header",
        narrative: "Spreadsheets exported from Excel start with a BOM, so the first header was read as \\u{feff}id and the importer reported unknown column id. The reader now strips a leading BOM.",
        facts: &[],
        files: &["importers/csv_reader.py"],
    },
    Answer {
        key: "docker-size",
        kind: "change",
        title: "Multi-stage Dockerfile: image from 1.2 GB to 90 MB",
        narrative: "The runtime image shipped compilers and build caches. The build stage compiles; the final stage copies the binary onto distroless.",
        facts: &["image size 90 MB"],
        files: &["Dockerfile"],
    },
    Answer {
        key: "stampede",
        kind: "bugfix",
        title: "Cache stampede on product pages: single-flight recompute",
        narrative: "When a popular product's cache entry expired, hundreds of requests recomputed it at once and the database load spiked. A single-flight lock lets one request recompute while others serve the stale value.",
        facts: &[],
        files: &["src/catalog/product_cache.rs"],
    },
    Answer {
        key: "dark-mode",
        kind: "feature",
        title: "Dark theme through CSS variables and prefers-color-scheme",
        narrative: "Colors moved to CSS custom properties; the dark palette applies when the OS asks for it, and a toggle in settings overrides it.",
        facts: &[],
        files: &["web/src/styles/theme.css"],
    },
    Answer {
        key: "paginate-off-by-one",
        kind: "bugfix",
        title: "Off-by-one in cursor pagination repeated the last item of each page",
        narrative: "The cursor compared created_at with >= so the boundary row came back on the next page. Cursors now carry (created_at, id) and compare strictly.",
        facts: &[],
        files: &["api/src/paginate.rs"],
    },
];

pub const QUESTIONS: &[Question] = &[
    Question {
        text: "why were big file uploads failing in production?",
        answer: "upload-413",
    },
    Question {
        text: "where do we keep user sessions now?",
        answer: "sessions-postgres",
    },
    Question {
        text: "which algorithm do we use to hash passwords",
        answer: "hash-argon2",
    },
    Question {
        text: "what format do our API error responses use?",
        answer: "errors-problem",
    },
    Question {
        text: "parse_config",
        answer: "parse-config",
    },
    Question {
        text: "loadUserProfile",
        answer: "load-profile",
    },
    Question {
        text: "jobs were sometimes processed twice by different workers, why?",
        answer: "claim-race",
    },
    Question {
        text: "payment webhook events coming in the wrong order",
        answer: "stripe-order",
    },
    Question {
        text: "the daily digest email shows yesterday's numbers for customers in Asia",
        answer: "digest-tz",
    },
    Question {
        text: "how many requests per minute can one API key make?",
        answer: "rate-limit",
    },
    Question {
        text: "the thumbnail resize service keeps growing in memory until it gets OOM killed",
        answer: "vips-leak",
    },
    Question {
        text: "how did we make the CI pipeline faster?",
        answer: "ci-cache",
    },
    Question {
        text: "why does the checkout total test fail randomly?",
        answer: "flaky-cents",
    },
    Question {
        text: "how can we turn a feature on for one account without deploying?",
        answer: "flags-table",
    },
    Question {
        text: "some long documents never show up in the search index",
        answer: "indexer-skip",
    },
    Question {
        text: "browser tabs hammer the server reconnecting the websocket when the gateway restarts",
        answer: "ws-backoff",
    },
    Question {
        text: "how are invoice PDFs generated?",
        answer: "pdf-typst",
    },
    Question {
        text: "wrong plural wording in the German shopping cart",
        answer: "de-plural",
    },
    Question {
        text: "the order history page was very slow for big customers",
        answer: "orders-index",
    },
    Question {
        text: "after signing in through the identity provider users land on the login page again, forever",
        answer: "samesite-loop",
    },
    Question {
        text: "we got too many connections errors from the database at month end",
        answer: "pool-exhausted",
    },
    Question {
        text: "can I see what deploy would do without actually running it?",
        answer: "deploy-dry-run",
    },
    Question {
        text: "customers received every notification email twice",
        answer: "email-dup",
    },
    Question {
        text: "what did we decide about logging in the services?",
        answer: "logging-json",
    },
    Question {
        text: "latency graphs in grafana are a thousand times too high",
        answer: "histogram-units",
    },
    Question {
        text: "retry_with_backoff shipping",
        answer: "retry-backoff",
    },
    Question {
        text: "where did the pricing logic of orders go?",
        answer: "order-split",
    },
    Question {
        text: "importing a spreadsheet says unknown column id even though the column is there",
        answer: "csv-bom",
    },
    Question {
        text: "why is our docker image so big?",
        answer: "docker-size",
    },
    Question {
        text: "database load spikes whenever the product cache expires",
        answer: "stampede",
    },
    Question {
        text: "does the app have a dark theme?",
        answer: "dark-mode",
    },
    Question {
        text: "the same item shows up at the bottom of one page and the top of the next",
        answer: "paginate-off-by-one",
    },
    Question {
        text: "what did we decide about password hashing?",
        answer: "hash-argon2",
    },
    Question {
        text: "ParseConfig environment overrides",
        answer: "parse-config",
    },
    Question {
        text: "Hi, since the deploy this morning we see some background jobs executed two times. \
               For example the invoice export for account 4411 ran twice at 09:14:02 and 09:14:02 \
               on worker-3 and worker-7, and the customer got two exports. Logs below:\n\
               [2026-11-20T09:14:02Z INFO  queue] worker-3 claimed job 88231 (export_invoices)\n\
               [2026-11-20T09:14:02Z INFO  queue] worker-7 claimed job 88231 (export_invoices)\n\
               [2026-11-20T09:14:09Z INFO  export] wrote 1 file for account 4411\n\
               [2026-11-20T09:14:09Z INFO  export] wrote 1 file for account 4411\n\
               It does not happen every time, maybe one job in a thousand, and only when the \
               queue is busy. We did not change the export code. Could it be the database? We are \
               on Postgres 15 with the default isolation level. Can someone look at how workers \
               claim jobs from the queue? This is pretty urgent because customers are being billed \
               twice for some exports and support is getting tickets about it. Thanks!",
        answer: "claim-race",
    },
    Question {
        text: "Bug report: resize worker restarts every few hours. Kubernetes shows the pod \
               terminated with reason OOMKilled, exit code 137. Memory graph climbs steadily from \
               200 MB after start to the 2 GiB limit, faster on days when users upload animated \
               GIFs for their profile. dmesg on the node:\n\
               [812345.123] Memory cgroup out of memory: Killed process 4242 (resize-worker) \
               total-vm:2893412kB, anon-rss:2091230kB\n\
               We tried raising the limit to 3 GiB but it just takes longer to die. Heap profiling \
               with valgrind massif points into the image library, lots of allocations from the \
               decode path that are never released. Static images do not seem to trigger it. \
               Is there a known issue with how we use the image library, some cache that grows \
               without bound? What should be changed in the worker so that memory stays flat \
               over a full day of uploads? Steps to reproduce: upload 500 animated GIFs in a loop \
               and watch the RSS of the worker process.",
        answer: "vips-leak",
    },
    Question {
        text: "Users report that after they click 'Sign in with Okta' and authenticate, they are \
               sent back to our app and immediately redirected to the sign in page again, which \
               bounces to Okta, which sends them back, over and over. Chrome and Safari both do \
               it, Firefox sometimes works. The network tab shows the callback request to \
               /auth/callback returns 302 to /login, and the request has no cookie header at all \
               even though we set the session cookie on the previous response. Nothing changed \
               on the Okta side. We recently hardened cookie attributes in a security sprint. \
               Steps: log out, click sign in, authenticate at the provider, observe the loop. \
               Expected: land on the dashboard. Actual: endless redirects until the browser \
               gives up with too many redirects.",
        answer: "samesite-loop",
    },
];

/// Components the generated work is about: words, identifiers in several
/// styles, and files.
struct Component {
    words: &'static [&'static str],
    idents: &'static [&'static str],
    files: &'static [&'static str],
}

const COMPONENTS: &[Component] = &[
    Component {
        words: &["upload", "file", "attachment", "size"],
        idents: &["uploadHandler", "save_attachment", "FileStore"],
        files: &["src/upload/handler.rs", "web/src/upload/UploadForm.tsx"],
    },
    Component {
        words: &["session", "cookie", "login", "user"],
        idents: &["SessionStore", "read_session", "cookieOptions"],
        files: &["src/session/store.rs", "src/auth/cookies.rs"],
    },
    Component {
        words: &["password", "auth", "login", "hash"],
        idents: &["verify_password", "AuthService", "hashPassword"],
        files: &["src/auth/password.rs", "src/auth/mod.rs"],
    },
    Component {
        words: &["api", "error", "response", "handler"],
        idents: &["ApiError", "into_response", "errorHandler"],
        files: &["api/src/errors.rs", "api/src/routes.rs"],
    },
    Component {
        words: &["config", "settings", "environment", "startup"],
        idents: &["loadSettings", "config_path", "EnvOverrides"],
        files: &["src/config/index.ts", "src/config/defaults.ts"],
    },
    Component {
        words: &["profile", "user", "page", "template"],
        idents: &["ProfileView", "render_avatar", "userProfile"],
        files: &["app/users/views.py", "app/users/templates/profile.html"],
    },
    Component {
        words: &["queue", "job", "worker", "retry"],
        idents: &["JobQueue", "enqueue_job", "workerPool"],
        files: &["src/queue/mod.rs", "src/queue/worker.rs"],
    },
    Component {
        words: &["billing", "invoice", "payment", "stripe"],
        idents: &["InvoiceMailer", "charge_customer", "paymentIntent"],
        files: &["billing/invoices.rb", "billing/payments.rb"],
    },
    Component {
        words: &["report", "digest", "email", "daily"],
        idents: &["DigestBuilder", "send_digest", "reportWindow"],
        files: &["reports/builder.rb", "reports/mailer.rb"],
    },
    Component {
        words: &["api", "key", "request", "middleware"],
        idents: &["ApiKey", "auth_middleware", "requestId"],
        files: &["src/middleware/auth.go", "src/middleware/logging.go"],
    },
    Component {
        words: &["image", "resize", "thumbnail", "memory"],
        idents: &["ResizeJob", "make_thumbnail", "imageCache"],
        files: &["services/resize/main.c", "services/resize/queue.c"],
    },
    Component {
        words: &["ci", "build", "pipeline", "test"],
        idents: &["build_matrix", "RUSTFLAGS", "cacheKey"],
        files: &[".github/workflows/release.yml", "Makefile"],
    },
    Component {
        words: &["test", "checkout", "cart", "total"],
        idents: &["CartTotals", "apply_coupon", "checkoutFlow"],
        files: &["shop/checkout/cart.py", "tests/test_cart.py"],
    },
    Component {
        words: &["feature", "flag", "admin", "toggle"],
        idents: &["FlagClient", "is_enabled", "adminToggle"],
        files: &["app/flags/client.ts", "app/admin/FlagsPage.tsx"],
    },
    Component {
        words: &["search", "index", "document", "query"],
        idents: &["SearchIndex", "index_document", "queryParser"],
        files: &["indexer/search.py", "indexer/schema.py"],
    },
    Component {
        words: &["websocket", "socket", "server", "connection"],
        idents: &["SocketServer", "broadcast_event", "onMessage"],
        files: &["web/src/socket/client.ts", "server/ws/hub.go"],
    },
    Component {
        words: &["pdf", "invoice", "export", "template"],
        idents: &["PdfExporter", "render_invoice", "pageLayout"],
        files: &["billing/pdf/mod.rs", "templates/receipt.typ"],
    },
    Component {
        words: &["locale", "translation", "german", "message"],
        idents: &["I18nProvider", "translate_key", "pluralRules"],
        files: &["locales/en.json", "web/src/i18n/index.ts"],
    },
    Component {
        words: &["order", "customer", "history", "database"],
        idents: &["OrderRepository", "list_orders", "orderHistory"],
        files: &[
            "src/orders/OrderRepository.java",
            "migrations/0050_orders.sql",
        ],
    },
    Component {
        words: &["deploy", "cli", "command", "release"],
        idents: &["DeployPlan", "run_migrations", "releaseTag"],
        files: &["cli/commands/release.go", "cli/main.go"],
    },
    Component {
        words: &["log", "logging", "tracing", "service"],
        idents: &["LogFormat", "init_tracing", "logLevel"],
        files: &["crates/telemetry/src/format.rs", "services/api/main.rs"],
    },
    Component {
        words: &["metrics", "latency", "dashboard", "grafana"],
        idents: &["MetricsRegistry", "observe_latency", "dashboardId"],
        files: &["src/metrics/mod.rs", "deploy/grafana/api.json"],
    },
    Component {
        words: &["shipping", "carrier", "http", "client"],
        idents: &["ShippingClient", "fetch_rates", "carrierCode"],
        files: &["src/shipping/rates.ts", "src/shipping/carriers.ts"],
    },
    Component {
        words: &["csv", "import", "spreadsheet", "column"],
        idents: &["CsvImporter", "parse_row", "columnMap"],
        files: &["importers/base.py", "importers/xlsx_reader.py"],
    },
    Component {
        words: &["docker", "image", "container", "build"],
        idents: &["BUILDKIT", "entrypoint_sh", "healthCheck"],
        files: &["docker-compose.yml", "deploy/entrypoint.sh"],
    },
    Component {
        words: &["cache", "product", "page", "redis"],
        idents: &["ProductCache", "invalidate_product", "cacheTtl"],
        files: &["src/catalog/product.rs", "src/catalog/mod.rs"],
    },
    Component {
        words: &["theme", "css", "style", "settings"],
        idents: &["ThemeProvider", "color_tokens", "darkPalette"],
        files: &["web/src/styles/base.css", "web/src/settings/Appearance.tsx"],
    },
    Component {
        words: &["page", "pagination", "cursor", "list"],
        idents: &["PageCursor", "next_page", "pageSize"],
        files: &["api/src/list.rs", "web/src/components/Pager.tsx"],
    },
];

const VERBS: &[&str] = &[
    "Fix",
    "Update",
    "Refactor",
    "Add",
    "Investigate",
    "Clean up",
    "Rename",
    "Document",
    "Test",
    "Improve",
];
const NOUNS: &[&str] = &[
    "error handling",
    "tests",
    "logging",
    "types",
    "docs",
    "config",
    "validation",
    "naming",
    "performance",
    "edge case",
    "the bug",
    "the issue",
];
const FILLER: &[&str] = &[
    "Looked at the code path and the tests around it before changing anything.",
    "The change is small but touches the error handling, so the tests were run twice.",
    "Users had reported that something looked wrong here; it was not reproducible at first.",
    "Kept the public API the same; only the internals changed.",
    "The previous implementation worked but was hard to read and had no tests.",
    "Ran the full test suite; two unrelated tests were flaky and passed on retry.",
    "Follow-up: the same pattern exists in other modules and should be cleaned up later.",
    "This was found while reviewing the logs of the last deploy.",
    "The fix needed a migration, which was checked on a copy of the production database.",
    "Nothing changed for users; this is groundwork for the next feature.",
    "The page now loads faster and the error message is clearer for users.",
    "Time was spent reading the library's documentation before choosing this approach.",
];

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// One generated observation of ordinary work.
pub fn noise_observation(rng: &mut Rng, i: usize) -> NewObservation {
    let c = rng.pick(COMPONENTS);
    let word = *rng.pick(c.words);
    let other = *rng.pick(c.words);
    let ident = *rng.pick(c.idents);
    let file = *rng.pick(c.files);
    let (kind, title) = match rng.below(9) {
        0 => ("change", format!("Edited {file}")),
        1 => ("change", format!("Ran tests for {word}")),
        2 => ("bugfix", format!("Fix failing {word} test")),
        3 => ("refactor", format!("{} {ident}", rng.pick(VERBS))),
        4 => (
            "discovery",
            format!("{word} {other} {} checked", rng.pick(NOUNS)),
        ),
        5 => (
            "feature",
            format!("{} {word} {}", rng.pick(VERBS), rng.pick(NOUNS)),
        ),
        6 => ("bugfix", format!("{word} error in {ident}")),
        7 => ("change", format!("Updated {word} and {other} in {file}")),
        _ => ("decision", format!("{word} {other} approach for {ident}")),
    };
    let long = rng.below(4) == 0;
    let sentences = 1 + rng.below(if long { 10 } else { 3 });
    let mut narrative = String::new();
    for _ in 0..sentences {
        let sentence: &&str = rng.pick(FILLER);
        narrative.push_str(sentence);
        narrative.push(' ');
        if rng.below(3) == 0 {
            narrative.push_str(&format!(
                "Touched {ident} while working on the {word} {other}. "
            ));
        }
    }
    NewObservation {
        uid: format!("noise-{i}"),
        kind: kind.into(),
        title,
        narrative: narrative.trim_end().to_owned(),
        facts: (0..2)
            .map(|_| format!("{} {ident}", rng.pick(NOUNS)))
            .take(i % 3)
            .collect(),
        concepts: vec![word.into()],
        files_modified: if rng.below(2) == 0 {
            vec![file.into()]
        } else {
            vec![]
        },
        files_read: vec![(*rng.pick(c.files)).into()],
        source: "bench".into(),
        ..Default::default()
    }
}

/// One generated turn summary.
pub fn noise_summary(rng: &mut Rng, i: usize) -> NewSummary {
    let c = rng.pick(COMPONENTS);
    let word = *rng.pick(c.words);
    let ident = *rng.pick(c.idents);
    NewSummary {
        uid: format!("turn-{i}"),
        request: format!("{} the {word} {}", rng.pick(VERBS), rng.pick(NOUNS)).to_lowercase(),
        investigated: format!("read {} and {ident}", rng.pick(c.files)),
        learned: rng.pick(FILLER).to_string(),
        completed: format!("{} {ident}", rng.pick(VERBS)),
        next_steps: if rng.below(2) == 0 {
            format!("test the {word} changes")
        } else {
            String::new()
        },
        source: "bench".into(),
        ..Default::default()
    }
}

/// An answer as an observation.
pub fn answer_observation(a: &Answer) -> NewObservation {
    NewObservation {
        uid: format!("answer-{}", a.key),
        kind: a.kind.into(),
        title: a.title.into(),
        narrative: a.narrative.into(),
        facts: a.facts.iter().map(|f| f.to_string()).collect(),
        files_modified: a.files.iter().map(|f| f.to_string()).collect(),
        source: "bench".into(),
        ..Default::default()
    }
}

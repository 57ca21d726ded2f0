//! Secret scanner: finds credentials in free text and replaces each one with a
//! `[REDACTED:<kind>]` marker.
//!
//! This runs in every hook process, so it is a hand-written single pass over
//! the bytes rather than a set of regular expressions. The hot loop costs one
//! table lookup per byte and stops only at `=`, `:`, `-`, `[`, `\` and at word
//! starts whose first two bytes begin something we look for (`AK…`, `gh…`,
//! `sk…`, `ey…`, `Be…`, `se…`, `pa…`, …). At a stop, a detector looks a bounded distance
//! around it:
//!
//! * **provider tokens** (`AKIA…`, `ghp_…`, `sk-ant-…`, `eyJ….eyJ…`, …): the
//!   prefix must start a word and the rest must have the provider's alphabet
//!   and length, then end the word;
//! * **private key blocks**: from `-----BEGIN … PRIVATE KEY-----` (followed by
//!   key material) to the matching `-----END …-----` line, or to the end of
//!   the text when there is none;
//! * **URL credentials**: only the password of `scheme://user:password@host`;
//! * **authorization headers**: the credential after `Bearer`/`Basic`/`token`;
//! * **assignments** (`KEY=value`, `key: value`, `"key": "value"`,
//!   `--password value`): the value, when the key names a secret
//!   ([`key_names_secret`]) and the value looks like data rather than a
//!   reference, a placeholder or code (`secret-assignment`); or, under any
//!   other key, when the value looks random (`high-entropy`). A YAML block
//!   scalar (`password: |`) is its indented lines;
//! * **command lines**: `mysql -pPASS`, `sshpass -p`, `docker login -p`,
//!   `htpasswd -b … PASS`, `curl -u user:PASS`, `aws configure set <secret
//!   key> VALUE`, SQL `PASSWORD '…'`, `.netrc` entries, and what `echo`
//!   or `printf` pipes into `base64 -d` when it decodes to `user:password`;
//! * **passwords stated in words**: `password is X`, `passphrase was X`,
//!   `password to X`, when X is quoted or has a digit or symbol among its
//!   letters (not a word of the sentence);
//! * **shapes of their own**: Telegram bot tokens (`<id>:<token>`), the
//!   `sig=` of an Azure SAS URL, PuTTY's `Private-Lines`/`Private-MAC`, the
//!   base64 lines before an `-----END … PRIVATE KEY-----` whose BEGIN line is
//!   not in the text;
//! * **CSV columns** whose header names a secret (the AWS console's
//!   credentials file): found by one pass over the lines before the scan,
//!   whose spans the scan then meets as spans found ahead.
//!
//! Every detector gives up after a constant look-ahead or returns a span that
//! the pass then jumps over, so the work is linear in the input. Spans start
//! and end on ASCII bytes (or at the end of the text), so a replacement never
//! splits a UTF-8 character. Redacting twice changes nothing: markers are
//! skipped, a value holding a marker is left alone, and nothing looks back
//! past what the pass has already redacted (a second pass sees a marker
//! there).

use std::borrow::Cow;
use std::collections::VecDeque;

/// The start of every marker this module writes.
const MARKER: &[u8] = b"[REDACTED:";

const SECRET_ASSIGNMENT: &str = "secret-assignment";
const HIGH_ENTROPY: &str = "high-entropy";
const BEARER: &str = "bearer-token";
const PRIVATE_KEY: &str = "private-key";
const URL_CREDENTIALS: &str = "url-credentials";
const SLACK_WEBHOOK: &str = "slack-webhook";

/// Longest key name looked at behind a `=` or `:`.
const KEY_MAX: usize = 64;
/// How far a value under a secret key is looked for (a closing quote, the end
/// of an unquoted word). A longer value under a secret key is redacted whole.
const SECRET_VALUE_WINDOW: usize = 4096;
/// Longest value considered for `high-entropy` (longer ones are data blobs).
const RANDOM_MAX: usize = 256;
const RANDOM_MIN: usize = 20;

/// Where the secrets of `text` are, in order and disjoint, with their kinds
/// (what [`redact_text`] replaces).
pub fn secret_spans(text: &str) -> Vec<(std::ops::Range<usize>, &'static str)> {
    Scanner::new(text)
        .run()
        .into_iter()
        .map(|s| (s.start..s.end, s.kind))
        .collect()
}

/// `text` with every secret replaced by `[REDACTED:<kind>]`; borrowed (no
/// allocation) when nothing was found.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    let spans = Scanner::new(text).run();
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for span in &spans {
        out.push_str(&text[from..span.start]);
        out.push_str("[REDACTED:");
        out.push_str(span.kind);
        out.push(']');
        from = span.end;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// True when a key, field or variable name says that its value is a secret:
/// `password`, `DB_PASS`, `PGPASSWORD`, `api_key`, `apiKey`, `X-Auth-Token`,
/// `client_secret`, `STRIPE_KEY`, `Authorization`, `cookie`, ... but not names
/// that describe a secret without holding one (`token_count`, `max_tokens`,
/// `password_hint`, `key_id`, `auth_url`) nor keys that are not credentials
/// (`primary_key`, `sort_key`, `public_key`, `keyboard`, `monkey`).
///
/// Names are split into words (`snake_case`, `kebab-case`, `camelCase`,
/// `UPPER_CASE`) and only the last dotted segment counts (`config.api_key`
/// does, `tokenData.whitelist` does not). `…key` names a secret after a
/// credential word (`api_key`, `signingKey`), or after any word but a lookup
/// one in the upper-case style of environment variables (`STRIPE_KEY`).
pub fn key_names_secret(key: &str) -> bool {
    names_secret(key.as_bytes())
}

// ---------------------------------------------------------------------------
// Provider tokens
// ---------------------------------------------------------------------------

/// The alphabet of a token's body.
#[derive(Clone, Copy)]
enum Set {
    UpperAlnum,
    Alnum,
    AlnumUnderscore,
    AlnumDash,
    Base64Url,
    /// Base64url plus `.` (newer GitLab tokens carry a `.01.` part).
    GitLab,
    LowerHex,
}

impl Set {
    fn has(self, c: u8) -> bool {
        match self {
            Set::UpperAlnum => c.is_ascii_uppercase() || c.is_ascii_digit(),
            Set::Alnum => c.is_ascii_alphanumeric(),
            Set::AlnumUnderscore => c.is_ascii_alphanumeric() || c == b'_',
            Set::AlnumDash => c.is_ascii_alphanumeric() || c == b'-',
            Set::Base64Url => c.is_ascii_alphanumeric() || c == b'_' || c == b'-',
            Set::GitLab => c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'),
            Set::LowerHex => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
        }
    }
}

/// Which character classes a token's body must contain: random tokens have
/// them, words and identifiers often do not.
#[derive(Clone, Copy)]
enum Mix {
    Any,
    DigitAndLetter,
    UpperAndLower,
    UpperLowerDigit,
}

impl Mix {
    fn accepts(self, body: &[u8]) -> bool {
        let has = |f: fn(&u8) -> bool| body.iter().any(f);
        match self {
            Mix::Any => true,
            Mix::DigitAndLetter => has(u8::is_ascii_digit) && has(u8::is_ascii_alphabetic),
            Mix::UpperAndLower => has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase),
            Mix::UpperLowerDigit => {
                has(u8::is_ascii_uppercase)
                    && has(u8::is_ascii_lowercase)
                    && has(u8::is_ascii_digit)
            }
        }
    }
}

struct Rule {
    prefix: &'static str,
    kind: &'static str,
    set: Set,
    min: usize,
    max: usize,
    mix: Mix,
}

const fn rule(
    prefix: &'static str,
    kind: &'static str,
    set: Set,
    min: usize,
    max: usize,
    mix: Mix,
) -> Rule {
    Rule {
        prefix,
        kind,
        set,
        min,
        max,
        mix,
    }
}

const AWS: &str = "aws-access-key";
const GITHUB: &str = "github-token";
const GITLAB: &str = "gitlab-token";
const SLACK: &str = "slack-token";
const STRIPE: &str = "stripe-key";
const SHOPIFY: &str = "shopify-token";
const DIGITALOCEAN: &str = "digitalocean-token";
const VAULT: &str = "vault-token";

// Rules grouped by the first byte of their prefix; within a group the first
// match wins, so more specific prefixes come first (`sk-ant-` before `sk-`).

const RULES_UPPER_A: &[Rule] = &[
    rule(
        "AGE-SECRET-KEY-1",
        "age-secret-key",
        Set::UpperAlnum,
        58,
        58,
        Mix::Any,
    ),
    rule("AKIA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("ASIA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("ABIA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("ACCA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("AGPA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("AIDA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("AIPA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("ANPA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("ANVA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("AROA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("APKA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("ASCA", AWS, Set::UpperAlnum, 16, 16, Mix::Any),
    rule("A3T", AWS, Set::UpperAlnum, 17, 17, Mix::Any),
    rule("AIza", "google-api-key", Set::Base64Url, 35, 35, Mix::Any),
];

const RULES_G: &[Rule] = &[
    rule(
        "github_pat_",
        GITHUB,
        Set::AlnumUnderscore,
        40,
        255,
        Mix::Any,
    ),
    rule("ghp_", GITHUB, Set::Alnum, 36, 255, Mix::Any),
    rule("gho_", GITHUB, Set::Alnum, 36, 255, Mix::Any),
    rule("ghu_", GITHUB, Set::Alnum, 36, 255, Mix::Any),
    rule("ghs_", GITHUB, Set::Alnum, 36, 255, Mix::Any),
    rule("ghr_", GITHUB, Set::Alnum, 36, 255, Mix::Any),
    rule("glpat-", GITLAB, Set::GitLab, 20, 255, Mix::Any),
    rule("gldt-", GITLAB, Set::GitLab, 20, 255, Mix::Any),
    rule("glrt-", GITLAB, Set::GitLab, 20, 255, Mix::Any),
    rule("glptt-", GITLAB, Set::GitLab, 20, 255, Mix::Any),
    rule("glft-", GITLAB, Set::GitLab, 20, 255, Mix::Any),
    rule("glimt-", GITLAB, Set::GitLab, 20, 255, Mix::Any),
    rule("glsoat-", GITLAB, Set::GitLab, 20, 255, Mix::Any),
    rule("glcbt-", GITLAB, Set::GitLab, 20, 255, Mix::Any),
    rule("gloas-", GITLAB, Set::GitLab, 20, 255, Mix::Any),
    rule("glagent-", GITLAB, Set::GitLab, 20, 255, Mix::Any),
    rule("glffct-", GITLAB, Set::GitLab, 20, 255, Mix::Any),
];

const RULES_X: &[Rule] = &[
    rule(
        "xoxe.xoxp-",
        SLACK,
        Set::AlnumDash,
        10,
        255,
        Mix::DigitAndLetter,
    ),
    rule("xoxb-", SLACK, Set::AlnumDash, 10, 255, Mix::DigitAndLetter),
    rule("xoxp-", SLACK, Set::AlnumDash, 10, 255, Mix::DigitAndLetter),
    rule("xoxa-", SLACK, Set::AlnumDash, 10, 255, Mix::DigitAndLetter),
    rule("xoxr-", SLACK, Set::AlnumDash, 10, 255, Mix::DigitAndLetter),
    rule("xoxs-", SLACK, Set::AlnumDash, 10, 255, Mix::DigitAndLetter),
    rule("xoxe-", SLACK, Set::AlnumDash, 10, 255, Mix::DigitAndLetter),
    rule("xapp-", SLACK, Set::AlnumDash, 10, 255, Mix::DigitAndLetter),
];

const RULES_S: &[Rule] = &[
    rule("sk_live_", STRIPE, Set::Alnum, 16, 255, Mix::Any),
    rule("sk_test_", STRIPE, Set::Alnum, 16, 255, Mix::Any),
    rule(
        "sk-ant-",
        "anthropic-key",
        Set::Base64Url,
        20,
        512,
        Mix::DigitAndLetter,
    ),
    rule(
        "sk-",
        "openai-key",
        Set::Base64Url,
        20,
        512,
        Mix::UpperLowerDigit,
    ),
    rule("shpat_", SHOPIFY, Set::LowerHex, 32, 32, Mix::Any),
    rule("shpca_", SHOPIFY, Set::LowerHex, 32, 32, Mix::Any),
    rule("shppa_", SHOPIFY, Set::LowerHex, 32, 32, Mix::Any),
    rule("shpss_", SHOPIFY, Set::LowerHex, 32, 32, Mix::Any),
];

const RULES_R: &[Rule] = &[
    rule("rk_live_", STRIPE, Set::Alnum, 16, 255, Mix::Any),
    rule("rk_test_", STRIPE, Set::Alnum, 16, 255, Mix::Any),
];

const RULES_W: &[Rule] = &[rule("whsec_", STRIPE, Set::Alnum, 24, 255, Mix::Any)];

const RULES_N: &[Rule] = &[rule(
    "npm_",
    "npm-token",
    Set::Alnum,
    36,
    36,
    Mix::DigitAndLetter,
)];

/// PyPI tokens are macaroons whose base64 starts with the same bytes.
const RULES_P: &[Rule] = &[rule(
    "pypi-AgE",
    "pypi-token",
    Set::Base64Url,
    40,
    1024,
    Mix::Any,
)];

const RULES_H: &[Rule] = &[
    rule(
        "hf_",
        "huggingface-token",
        Set::Alnum,
        30,
        40,
        Mix::UpperAndLower,
    ),
    // HashiCorp Vault service, batch and recovery tokens.
    rule("hvs.", VAULT, Set::Base64Url, 24, 1024, Mix::DigitAndLetter),
    rule("hvb.", VAULT, Set::Base64Url, 24, 1024, Mix::DigitAndLetter),
    rule("hvr.", VAULT, Set::Base64Url, 24, 1024, Mix::DigitAndLetter),
];

/// Google OAuth access tokens (`ya29.a0Af…`, `ya29.c.b0Aa…`).
const RULES_Y: &[Rule] = &[rule(
    "ya29.",
    "google-oauth-token",
    Set::GitLab,
    30,
    4096,
    Mix::DigitAndLetter,
)];

/// Twilio API key SIDs.
const RULES_UPPER_S: &[Rule] = &[rule(
    "SK",
    "twilio-key",
    Set::LowerHex,
    32,
    32,
    Mix::DigitAndLetter,
)];

const RULES_D: &[Rule] = &[
    rule("dop_v1_", DIGITALOCEAN, Set::LowerHex, 64, 64, Mix::Any),
    rule("doo_v1_", DIGITALOCEAN, Set::LowerHex, 64, 64, Mix::Any),
    rule("dor_v1_", DIGITALOCEAN, Set::LowerHex, 64, 64, Mix::Any),
];

fn rules_for(first: u8) -> &'static [Rule] {
    match first {
        b'A' => RULES_UPPER_A,
        b'g' => RULES_G,
        b'x' => RULES_X,
        b's' => RULES_S,
        b'r' => RULES_R,
        b'w' => RULES_W,
        b'n' => RULES_N,
        b'p' => RULES_P,
        b'h' => RULES_H,
        b'y' => RULES_Y,
        b'S' => RULES_UPPER_S,
        b'd' => RULES_D,
        _ => &[],
    }
}

/// All rule groups (for building the tables below).
const RULE_GROUPS: &[&[Rule]] = &[
    RULES_UPPER_A,
    RULES_G,
    RULES_X,
    RULES_S,
    RULES_R,
    RULES_W,
    RULES_N,
    RULES_P,
    RULES_H,
    RULES_UPPER_S,
    RULES_D,
    RULES_Y,
];

/// Two-byte starts of everything a word-start detector looks for: token
/// prefixes, JWTs, SendGrid keys, `Bearer` in any case, Slack webhook hosts.
/// `set` (`aws configure set <key> <value>`) and `password` in any case
/// (`WITH PASSWORD '…'`, a `.netrc`) too.
const EXTRA_STARTS: &[&[u8; 2]] = &[
    b"ey", b"SG", b"be", b"bE", b"Be", b"BE", b"ho", b"se", b"pa", b"Pa", b"PA", b"ec", b"pr",
];

/// Bit `a * 256 + b` is set when a detection may start with bytes `a b`.
const PAIRS: [u64; 1024] = {
    let mut t = [0u64; 1024];
    let mut g = 0;
    while g < RULE_GROUPS.len() {
        let mut r = 0;
        while r < RULE_GROUPS[g].len() {
            let p = RULE_GROUPS[g][r].prefix.as_bytes();
            let k = (p[0] as usize) << 8 | p[1] as usize;
            t[k >> 6] |= 1 << (k & 63);
            r += 1;
        }
        g += 1;
    }
    let mut e = 0;
    while e < EXTRA_STARTS.len() {
        let p = EXTRA_STARTS[e];
        let k = (p[0] as usize) << 8 | p[1] as usize;
        t[k >> 6] |= 1 << (k & 63);
        e += 1;
    }
    t
};

fn pair_may_start(a: u8, b: u8) -> bool {
    let k = (a as usize) << 8 | b as usize;
    PAIRS[k >> 6] >> (k & 63) & 1 == 1
}

/// Byte classes for the hot loop (bit flags).
const WORD: u8 = 1;
/// `=`, `:` (assignments, URLs), `-` (key blocks, flags), `[` (markers), `\`
/// (escapes such as `\n` before a token).
const PUNCT: u8 = 2;
/// First byte of something a word-start detector looks for.
const ANCHOR: u8 = 4;

const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphanumeric() || b == b'_' {
            t[c] = WORD;
        }
        c += 1;
    }
    let mut g = 0;
    while g < RULE_GROUPS.len() {
        let mut r = 0;
        while r < RULE_GROUPS[g].len() {
            t[RULE_GROUPS[g][r].prefix.as_bytes()[0] as usize] |= ANCHOR;
            r += 1;
        }
        g += 1;
    }
    let mut e = 0;
    while e < EXTRA_STARTS.len() {
        t[EXTRA_STARTS[e][0] as usize] |= ANCHOR;
        e += 1;
    }
    let punct = b"=:-[\\";
    let mut i = 0;
    while i < punct.len() {
        t[punct[i] as usize] = PUNCT;
        i += 1;
    }
    t
};

// ---------------------------------------------------------------------------
// Byte classes
// ---------------------------------------------------------------------------

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Characters of an HTTP auth credential (RFC 7235 token68, plus `_`).
fn is_token68(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

/// A quote at `at` that opens a value (`realm="x"`) rather than closing
/// the quoted text a padded credential ended (`'Basic dXNlcg=='`).
fn opens_quoted_value(b: &[u8], at: usize) -> bool {
    matches!(b.get(at), Some(b'"' | b'\''))
        && b.get(at + 1).is_some_and(|&c| is_word(c) || c == b'/')
}

/// Standard or URL-safe base64, padded or not; None when `v` is not base64.
fn decode_base64(v: &[u8]) -> Option<Vec<u8>> {
    let body = v
        .strip_suffix(b"==")
        .or_else(|| v.strip_suffix(b"="))
        .unwrap_or(v);
    if body.len() < 8 || body.len() % 4 == 1 {
        return None;
    }
    let sextet = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for &c in body {
        acc = acc << 6 | u32::from(sextet(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// Characters of a type annotation (`&'static str`, `Option<String>`, `string | null`).
fn is_type_char(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'_' | b'&' | b'\'' | b'<' | b'>' | b':' | b'.' | b' ' | b'\t' | b'|' | b'?' | b'*'
        )
}

/// Characters of a key name (`DB_PASSWORD`, `x-api-key`, `spring.datasource.password`).
fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

fn is_quote(c: u8) -> bool {
    matches!(c, b'"' | b'\'' | b'`')
}

/// The byte at `j` is the letter of a `\n`, `\r` or `\t` escape (text that is
/// itself JSON- or string-escaped).
fn escape_letter_at(b: &[u8], j: usize) -> bool {
    j >= 1 && matches!(b.get(j), Some(b'n' | b'r' | b't')) && b[j - 1] == b'\\'
}

/// Where an unquoted value ends.
fn ends_unquoted(b: &[u8], j: usize) -> bool {
    let c = b[j];
    c.is_ascii_whitespace()
        || matches!(
            c,
            b'"' | b'\''
                | b'`'
                | b','
                | b';'
                | b'('
                | b')'
                | b'['
                | b']'
                | b'}'
                | b'<'
                | b'>'
                | b'&'
                | b'|'
        )
        || (c == b'\\' && matches!(b.get(j + 1), Some(b'n' | b'r' | b't' | b'"')))
}

/// Length of the well-formed marker (`[REDACTED:kind]`) at the start of `b`.
fn marker_len(b: &[u8]) -> Option<usize> {
    let rest = b.strip_prefix(MARKER)?;
    let kind = rest
        .iter()
        .take(32)
        .take_while(|&&c| c.is_ascii_lowercase() || c == b'-')
        .count();
    (kind > 0 && rest.get(kind) == Some(&b']')).then_some(MARKER.len() + kind + 1)
}

/// A well-formed marker ends at `end` (its `]` is at `end - 1`).
fn marker_ends_at(b: &[u8], end: usize) -> bool {
    end >= 1
        && b[end - 1] == b']'
        && b[end.saturating_sub(48)..end]
            .iter()
            .rposition(|&c| c == b'[')
            .is_some_and(|k| {
                let start = end.saturating_sub(48) + k;
                marker_len(&b[start..]) == Some(end - start)
            })
}

/// A well-formed marker somewhere in `v`.
fn holds_marker(v: &[u8]) -> bool {
    (0..v.len()).any(|k| v[k] == b'[' && marker_len(&v[k..]).is_some())
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn starts_with_ignore_case(hay: &[u8], prefix: &[u8]) -> bool {
    hay.len() >= prefix.len() && hay[..prefix.len()].eq_ignore_ascii_case(prefix)
}

// ---------------------------------------------------------------------------
// The scan
// ---------------------------------------------------------------------------

/// What a detector found.
enum Hit {
    /// A span starting where the scan is (after at most a key, a scheme or a
    /// blank): the scan continues after it.
    Here(Span),
    /// A span further on, after text that still needs scanning.
    Ahead(Span),
}

/// Adds `span` to the sorted, disjoint spans ahead of the scan, joining
/// it with those it overlaps (nothing when one of them holds it already).
fn insert_ahead(ahead: &mut VecDeque<Span>, span: Span) {
    let mut k = ahead.partition_point(|a| a.start <= span.start);
    if k > 0 && span.end <= ahead[k - 1].end {
        return;
    }
    ahead.insert(k, span);
    if k > 0 && ahead[k].start < ahead[k - 1].end {
        ahead[k - 1].end = ahead[k - 1].end.max(ahead[k].end);
        ahead.remove(k);
        k -= 1;
    }
    while k + 1 < ahead.len() && ahead[k + 1].start < ahead[k].end {
        ahead[k].end = ahead[k].end.max(ahead[k + 1].end);
        ahead.remove(k + 1);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    kind: &'static str,
}

/// A value found after a `=`, `:` or flag.
#[derive(Debug, Clone, Copy)]
struct Val {
    start: usize,
    end: usize,
    quoted: bool,
    /// The byte right after the value (0 at the end of the text).
    next: u8,
    /// The look-ahead window ended before the value did.
    truncated: bool,
}

/// A key name found before a `=` or `:`.
#[derive(Debug, Clone, Copy)]
struct Key {
    start: usize,
    end: usize,
    quoted: bool,
}

struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    spans: Vec<Span>,
    /// The closing quote of the outermost quoted value read and not yet
    /// passed: a span that starts inside it stops there, so that a value
    /// quoted within another (`"a: 'b" c'`) cannot move the outer quote and
    /// change what a second pass reads.
    fence: std::cell::Cell<usize>,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Scanner<'a> {
        Scanner {
            text,
            b: text.as_bytes(),
            spans: Vec::new(),
            fence: std::cell::Cell::new(0),
        }
    }

    fn run(mut self) -> Vec<Span> {
        let b = self.b;
        let n = b.len();
        // Spans found ahead of the scan (the password of `user:password`),
        // emitted when the scan gets there: what lies before them (the user
        // name) is still scanned.
        let mut ahead: VecDeque<Span> = self.csv_secret_columns().into();
        let mut i = 0;
        while i < n {
            let limit = match ahead.front() {
                Some(&next) if next.start <= i => {
                    ahead.pop_front();
                    i = self.push(next, &mut ahead);
                    continue;
                }
                Some(next) => next.start,
                None => n,
            };
            // The hot loop: past everything that cannot start a detection,
            // with one well-predicted branch per byte.
            let mut prev_word =
                i > 0 && i != self.floor() && (is_word(b[i - 1]) || b[i - 1] == b'-');
            while i < limit {
                let class = CLASS[b[i] as usize];
                if (class & PUNCT != 0) | ((class & ANCHOR != 0) & !prev_word) {
                    let next = if i + 1 < n { b[i + 1] } else { 0 };
                    if class & PUNCT != 0 || pair_may_start(b[i], next) {
                        break;
                    }
                }
                prev_word = class & WORD != 0;
                i += 1;
            }
            if i >= limit {
                continue;
            }
            let hit = match b[i] {
                b'[' => {
                    i = self.skip_marker(i);
                    continue;
                }
                // `\n`, `\t`, `\r` escapes: a token may start right after.
                b'\\' => {
                    if i + 3 < n && escape_letter_at(b, i + 1) && pair_may_start(b[i + 2], b[i + 3])
                    {
                        self.detect(i + 2)
                    } else {
                        None
                    }
                }
                _ => self.detect(i),
            };
            match hit {
                Some(Hit::Here(span)) => {
                    i = self.push(span, &mut ahead);
                }
                Some(Hit::Ahead(span)) => {
                    let span = self.fenced(Span {
                        end: self.past_key_block(span.start, span.end),
                        ..span
                    });
                    insert_ahead(&mut ahead, span);
                    i += 1;
                }
                None => i += 1,
            }
        }
        while let Some(span) = ahead.pop_front() {
            self.push(span, &mut ahead);
        }
        self.spans
    }

    /// Records `span` (which starts at or after every span so far), possibly
    /// extended over a key block or stopped at the fence, trims or drops the
    /// spans ahead that it covers, and returns where the scan goes on.
    fn push(&mut self, mut span: Span, ahead: &mut VecDeque<Span>) -> usize {
        // A value cut at its first blank must not leave the body of a key
        // block behind.
        span.end = self.past_key_block(span.start, span.end);
        span = self.fenced(span);
        debug_assert!(span.start < span.end && span.end <= self.b.len());
        debug_assert!(self.spans.last().is_none_or(|last| last.end <= span.start));
        debug_assert!(
            self.text.is_char_boundary(span.start) && self.text.is_char_boundary(span.end)
        );
        // The spans ahead are sorted and disjoint: only a prefix can start
        // before this one ends.
        while let Some(a) = ahead.front_mut() {
            if a.start >= span.end {
                break;
            }
            if a.end <= span.end {
                ahead.pop_front();
            } else {
                a.start = span.end;
                break;
            }
        }
        self.spans.push(span);
        span.end
    }

    /// `span`, stopped at the fence when it starts inside the fenced value (key
    /// blocks excepted: they are cut whole).
    fn fenced(&self, mut span: Span) -> Span {
        let fence = self.fence.get();
        if span.kind != PRIVATE_KEY && span.start < fence && span.end > fence {
            span.end = fence;
        }
        span
    }

    /// Past one of our own markers (so that it is never redacted again), or
    /// just past the `[`.
    fn skip_marker(&self, i: usize) -> usize {
        marker_len(&self.b[i..]).map_or(i + 1, |len| i + len)
    }

    fn detect(&self, i: usize) -> Option<Hit> {
        let b = self.b;
        let here = match b[i] {
            b':' if b[i + 1..].starts_with(b"//") => {
                return self.url_credentials(i).map(Hit::Ahead);
            }
            b':' if let Some(span) = self.telegram_token(i) => return Some(Hit::Here(span)),
            b'=' | b':' => return self.assignment(i),
            b'-' if b[i..].starts_with(b"-----BEGIN ") => self.private_key(i),
            b'-' if b[i..].starts_with(b"-----END ") => self.orphan_key_end(i),
            b'-' => return self.flag(i),
            c => {
                if !self.word_start(i) {
                    return None;
                }
                if let Some((end, kind)) = self.match_token(i) {
                    return Some(Hit::Here(Span {
                        start: i,
                        end,
                        kind,
                    }));
                }
                match c {
                    b'b' | b'B' => self.bearer(i),
                    b'h' => self.slack_webhook(i),
                    b's' => self.configure_set(i),
                    b'p' | b'P' => self.password_word(i).or_else(|| self.echo_into_decoder(i)),
                    b'e' => self.echo_into_decoder(i),
                    _ => None,
                }
            }
        };
        here.map(Hit::Here)
    }

    /// A token may start here: not in the middle of a word (`-` counts as
    /// part of a word, so `task-list` or `my-sk-...` never start one).
    fn word_start(&self, i: usize) -> bool {
        let b = self.b;
        // Right after a redaction counts as a start: the marker ends a word.
        i == 0
            || i == self.floor()
            || !(is_word(b[i - 1]) || b[i - 1] == b'-')
            || escape_letter_at(b, i - 1)
    }

    /// A token may end here.
    fn word_end(&self, j: usize) -> bool {
        j >= self.b.len() || !is_word(self.b[j])
    }

    /// A provider token starting at `i` (which starts a word): its end and kind.
    fn match_token(&self, i: usize) -> Option<(usize, &'static str)> {
        let b = self.b;
        if i >= b.len() {
            return None;
        }
        for r in rules_for(b[i]) {
            if let Some(end) = self.match_rule(i, r) {
                return Some((end, r.kind));
            }
        }
        match b[i] {
            b'e' => self.jwt(i).map(|end| (end, "jwt")),
            b'S' => self.sendgrid(i).map(|end| (end, "sendgrid-key")),
            _ => None,
        }
    }

    fn match_rule(&self, i: usize, r: &Rule) -> Option<usize> {
        let b = self.b;
        let p = r.prefix.as_bytes();
        if b.get(i + 1) != Some(&p[1]) || !b[i..].starts_with(p) {
            return None;
        }
        let s = i + p.len();
        // One byte past the maximum is enough to know the run is too long.
        let end = self.run_of(s, r.set, r.max + 1);
        let mut end = end;
        if matches!(r.set, Set::GitLab) {
            while end > s && b[end - 1] == b'.' {
                end -= 1;
            }
        }
        let len = end - s;
        (len >= r.min && len <= r.max && self.word_end(end) && r.mix.accepts(&b[s..end]))
            .then_some(end)
    }

    /// End of the run of `set` bytes from `s`, looking at most `cap` bytes.
    fn run_of(&self, s: usize, set: Set, cap: usize) -> usize {
        let b = self.b;
        let limit = s.saturating_add(cap).min(b.len());
        let mut j = s;
        // (A run never takes in the `-----` of a key block glued to it.)
        while j < limit && set.has(b[j]) && !(b[j] == b'-' && b[j..].starts_with(b"-----")) {
            j += 1;
        }
        j
    }

    /// `eyJ<header>.eyJ<payload>[.<signature>]`.
    fn jwt(&self, i: usize) -> Option<usize> {
        let b = self.b;
        if !b[i..].starts_with(b"eyJ") {
            return None;
        }
        let header_end = self.run_of(i, Set::Base64Url, 4096);
        if header_end - i < 10 || b.get(header_end) != Some(&b'.') {
            return None;
        }
        let p = header_end + 1;
        if !b[p..].starts_with(b"eyJ") {
            return None;
        }
        let payload_end = self.run_of(p, Set::Base64Url, 16384);
        if payload_end - p < 10 {
            return None;
        }
        let mut end = payload_end;
        if b.get(payload_end) == Some(&b'.') {
            let sig_end = self.run_of(payload_end + 1, Set::Base64Url, 4096);
            if sig_end > payload_end + 1 {
                end = sig_end;
            }
        }
        self.word_end(end).then_some(end)
    }

    /// `SG.<22>.<43>`.
    fn sendgrid(&self, i: usize) -> Option<usize> {
        let b = self.b;
        if !b[i..].starts_with(b"SG.") {
            return None;
        }
        let a = i + 3;
        let a_end = self.run_of(a, Set::Base64Url, 33);
        if !(16..=32).contains(&(a_end - a)) || b.get(a_end) != Some(&b'.') {
            return None;
        }
        let s = a_end + 1;
        let end = self.run_of(s, Set::Base64Url, 65);
        ((32..=64).contains(&(end - s)) && self.word_end(end)).then_some(end)
    }

    /// `Bearer <credential>` anywhere (header lines, curl commands, logs).
    fn bearer(&self, i: usize) -> Option<Span> {
        let b = self.b;
        if !starts_with_ignore_case(&b[i..], b"bearer")
            || !b.get(i + 6).is_some_and(|&c| is_blank(c))
        {
            return None;
        }
        let s = self.skip_blanks(i + 6);
        self.credential(s, b.len())
    }

    /// The credential of an authorization scheme, starting at `s` and ending
    /// before `limit`: a provider kind when it is a known token.
    fn credential(&self, s: usize, limit: usize) -> Option<Span> {
        let b = self.b;
        let mut end = s;
        while end < limit && is_token68(b[end]) {
            end += 1;
        }
        while end > s && b[end - 1] == b'.' {
            end -= 1;
        }
        let v = &b[s..end];
        if v.len() < 8 || generic_benign(v) || placeholder_phrase(v) {
            return None;
        }
        if v.iter().all(u8::is_ascii_alphabetic) && v.len() < 20 {
            return None; // a word: "Bearer authentication"
        }
        // `=` only pads the end of a credential: `realm="x"` is an auth-param.
        if let Some(eq) = v.iter().position(|&c| c == b'=')
            && (v[eq..].iter().any(|&c| c != b'=') || opens_quoted_value(b, end))
        {
            return None;
        }
        // A credential ends the word: not `abc[`, `abc:`, `abc@`.
        if !b.get(end).is_none_or(|&c| {
            c.is_ascii_whitespace()
                || matches!(
                    c,
                    b'"' | b'\''
                        | b'`'
                        | b','
                        | b';'
                        | b')'
                        | b']'
                        | b'}'
                        | b'>'
                        | b'<'
                        | b'\\'
                        | b'.'
                        | b'&'
                )
        }) {
            return None;
        }
        let kind = match self.match_token(s) {
            Some((e, kind)) if e == end => kind,
            _ => BEARER,
        };
        Some(Span {
            start: s,
            end: self.past_key_block(s, end),
            kind,
        })
    }

    /// `hooks.slack.com/services/T…/B…/…`: the path is the secret.
    fn slack_webhook(&self, i: usize) -> Option<Span> {
        let b = self.b;
        let host = b"hooks.slack.com/";
        if !b[i..].starts_with(host) {
            return None;
        }
        let rest = &b[i + host.len()..];
        let section = [&b"services/"[..], b"workflows/", b"triggers/"]
            .into_iter()
            .find(|s| rest.starts_with(s))?;
        let s = i + host.len() + section.len();
        let mut end = s;
        while end < b.len()
            && end - s < 512
            && (b[end].is_ascii_alphanumeric() || matches!(b[end], b'/' | b'_' | b'-'))
        {
            end += 1;
        }
        (end - s >= 20).then_some(Span {
            start: s,
            end,
            kind: SLACK_WEBHOOK,
        })
    }

    /// `-----BEGIN … PRIVATE KEY-----` through the matching END line, or to the
    /// end of the text when the block is not terminated.
    fn private_key(&self, i: usize) -> Option<Span> {
        let b = self.b;
        let label_start = i + "-----BEGIN ".len();
        let label_end = self.label_end(label_start)?;
        if !is_private_label(&b[label_start..label_end]) || !self.key_material_after(label_end + 5)
        {
            return None; // a mention of the header, not a key
        }
        let mut from = label_end + 5;
        let mut end = b.len();
        while let Some(k) = self.text[from..].find("-----END ") {
            let ls = from + k + "-----END ".len();
            match self.label_end(ls) {
                Some(le) if is_private_label(&b[ls..le]) => {
                    end = le + 5;
                    break;
                }
                _ => from = ls,
            }
        }
        Some(Span {
            start: i,
            end,
            kind: PRIVATE_KEY,
        })
    }

    /// Base64 key material (a run of 40 or more characters) within a few
    /// lines of `from`, past headers such as `Proc-Type:` or `Version:`.
    fn key_material_after(&self, from: usize) -> bool {
        let b = self.b;
        let limit = from.saturating_add(512).min(b.len());
        let mut run = 0;
        for (k, &c) in b[from..limit].iter().enumerate() {
            if b[from + k..].starts_with(b"-----") || b[from + k..].starts_with(MARKER) {
                // The END line or another block came first (or, on a second
                // pass, the marker that replaced it).
                return false;
            }
            if c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/') {
                run += 1;
                if run >= 40 {
                    return true;
                }
            } else {
                run = 0;
            }
        }
        false
    }

    /// End of a PEM label (`RSA PRIVATE KEY`) that is followed by `-----`.
    fn label_end(&self, s: usize) -> Option<usize> {
        let b = self.b;
        let mut j = s;
        while j < b.len()
            && j - s < 48
            && (b[j].is_ascii_uppercase() || b[j].is_ascii_digit() || b[j] == b' ')
        {
            j += 1;
        }
        b[j..].starts_with(b"-----").then_some(j)
    }

    /// `scheme://user:password@host`: the password only.
    fn url_credentials(&self, i: usize) -> Option<Span> {
        let b = self.b;
        if i == 0 || !b[i - 1].is_ascii_alphanumeric() {
            return None;
        }
        let a = i + 3;
        let mut j = a;
        let mut at = None;
        while j < b.len() && j - a < 1024 {
            let c = b[j];
            if c.is_ascii_whitespace()
                || matches!(
                    c,
                    b'/' | b'?' | b'#' | b'"' | b'\'' | b'`' | b'<' | b'>' | b'\\'
                )
                || (c == b'[' && marker_len(&b[j..]).is_some())
            {
                break;
            }
            if c == b'@' {
                at = Some(j);
            }
            j += 1;
        }
        let at = at?;
        let colon = a + b[a..at].iter().position(|&c| c == b':')?;
        let pw = &b[colon + 1..at];
        let benign = pw.len() < 3
            || marker_len(pw).is_some()
            || matches!(pw[0], b'$' | b'<' | b'{' | b'%')
            || is_not_secret_word(pw)
            || pw.iter().all(|&c| c == b'*');
        if benign {
            return None;
        }
        let kind = match self.match_token(colon + 1) {
            Some((end, kind)) if end == at => kind,
            _ => URL_CREDENTIALS,
        };
        Some(Span {
            start: colon + 1,
            end: at,
            kind,
        })
    }

    /// `end`, or the end of a private key block that starts in `start..end`:
    /// a value cut at its first blank must not leave the body of a key behind.
    fn past_key_block(&self, start: usize, end: usize) -> usize {
        let b = self.b;
        let Some(k) = b[start..end].windows(10).position(|w| w == b"-----BEGIN") else {
            return end;
        };
        if !b[start + k..].starts_with(b"-----BEGIN ") {
            return end;
        }
        self.private_key(start + k)
            .map_or(end, |block| end.max(block.end))
    }

    fn skip_blanks(&self, mut j: usize) -> usize {
        while j < self.b.len() && is_blank(self.b[j]) {
            j += 1;
        }
        j
    }

    /// `--password value`, `--api-key "value"`, `--user name:password`,
    /// `-u name:password`. (`--token=value` is handled as an assignment.)
    fn flag(&self, i: usize) -> Option<Hit> {
        let b = self.b;
        if i > 0 && !matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'"' | b'\'' | b'(') {
            return None;
        }
        let (name_start, name_end) = match b.get(i + 1) {
            Some(b'-') => {
                let s = i + 2;
                let mut e = s;
                while e < b.len()
                    && e - s <= KEY_MAX
                    && (b[e].is_ascii_alphanumeric() || matches!(b[e], b'_' | b'-'))
                {
                    e += 1;
                }
                if e == s || e - s > KEY_MAX {
                    return None;
                }
                (s, e)
            }
            Some(b'u') => (i + 1, i + 2),
            Some(b'p') => return self.short_password_flag(i),
            Some(c) if c.is_ascii_alphabetic() => return self.htpasswd_batch(i),
            _ => return None,
        };
        if !b.get(name_end).is_some_and(|&c| is_blank(c)) {
            return None;
        }
        let name = &b[name_start..name_end];
        let user = name == b"u" || name == b"user";
        if !user && !names_secret(name) {
            return None;
        }
        let vs = self.skip_blanks(name_end);
        if vs >= b.len() || b[vs] == b'-' {
            return None;
        }
        let window = if user { 1024 } else { SECRET_VALUE_WINDOW };
        let v = self.value_at(vs, window)?;
        if user {
            if v.truncated || holds_marker(&b[v.start..v.end]) {
                return None; // an earlier pass has been here (its marker holds a `:`)
            }
            let colon = b[v.start..v.end].iter().position(|&c| c == b':')?;
            let ps = v.start + colon + 1;
            if ps >= v.end || generic_benign(&b[ps..v.end]) {
                return None;
            }
            // The user name is scanned too.
            return Some(Hit::Ahead(Span {
                start: ps,
                end: v.end,
                kind: SECRET_ASSIGNMENT,
            }));
        }
        self.secret_value(v, true, name).map(Hit::Here)
    }

    /// `key = value`, `key: value`, `"key": "value"`, `key => value`,
    /// `key := value`, with the separator at `i`.
    fn assignment(&self, i: usize) -> Option<Hit> {
        let b = self.b;
        let c = b[i];
        let next = b.get(i + 1).copied().unwrap_or(0);
        let (key_end, value_from) = self.separator(i)?;
        let key = self.key_before(key_end)?;
        if c == b':' && !key.quoted && !is_blank(next) {
            return None; // `user:pass`, `a:b`, times, ...
        }
        if c == b'=' && !key.quoted && self.follows_annotation_colon(key.start) {
            // `const NAME: VIRTUAL_KEY = 13u16;`: that is a type, not a key;
            // the name's own `:` decides.
            return None;
        }
        let name = &b[key.start..key.end];
        let vs = self.skip_blanks(value_from);
        if vs >= b.len() {
            return None;
        }
        if let Some(hit) = self.special_assignment(c, key, name, vs) {
            return hit;
        }
        if b[vs..].starts_with(b"-----BEGIN ")
            || (is_quote(b[vs]) && b[vs + 1..].starts_with(b"-----BEGIN "))
        {
            // The block spans lines: the PEM detector takes all of it.
            let at = if is_quote(b[vs]) { vs + 1 } else { vs };
            return self.private_key(at).map(Hit::Here);
        }
        if names_secret(name) {
            return self.named_secret(c, key, name, vs);
        }
        self.random_assigned(name, vs)
    }

    /// Where the key ends and the value starts for the separator at `i`;
    /// None for a comparison, a `::` path or the `:` of `:=`.
    fn separator(&self, i: usize) -> Option<(usize, usize)> {
        let b = self.b;
        let next = b.get(i + 1).copied().unwrap_or(0);
        let prev = if i > 0 { b[i - 1] } else { 0 };
        if b[i] == b'=' {
            if matches!(next, b'=' | b'~') || matches!(prev, b'=' | b'!' | b'<' | b'>') {
                return None; // a comparison
            }
            let ke = if matches!(prev, b':' | b'+' | b'?') {
                i - 1
            } else {
                i
            };
            Some((ke, if next == b'>' { i + 2 } else { i + 1 }))
        } else {
            if next == b':' || prev == b':' || next == b'=' {
                return None; // `::` paths, `:=` (the `=` handles it)
            }
            Some((i, i + 1))
        }
    }

    /// The value at `vs` of a key that names a secret (separator `c`),
    /// unless it is a type annotation's, prose, or a bare abbreviation.
    fn named_secret(&self, c: u8, key: Key, name: &[u8], vs: usize) -> Option<Hit> {
        let b = self.b;
        if c == b':'
            && let Some(block) = self.yaml_block_scalar(key.start, vs)
        {
            return block.map(Hit::Here);
        }
        let v = self.value_at(vs, SECRET_VALUE_WINDOW)?;
        let upper =
            name.iter().any(u8::is_ascii_uppercase) && !name.iter().any(u8::is_ascii_lowercase);
        if c == b':' && !v.quoted && !is_auth_scheme(&b[v.start..v.end]) {
            // `password: str = "..."`: the value is after the type (which
            // is still scanned); `Basic dXNlcg=` is a credential's padding.
            if let Some(annotated) = self.annotated_value(vs, upper, name) {
                return annotated.map(Hit::Ahead);
            }
            if self.prose_after_colon(v) {
                return None;
            }
        }
        if !v.quoted && self.word_under_bare_abbreviation(v, key.start, key.end) {
            return None;
        }
        self.secret_value(v, upper, name).map(Hit::Here)
    }

    /// Prose after a secret's name and a colon: "`api_key`: the key of the
    /// account", ":param token: REQUIRED.  The token ...".
    fn prose_after_colon(&self, v: Val) -> bool {
        let b = self.b;
        let word = &b[v.start..v.end];
        let word = word
            .strip_suffix(b".")
            .or_else(|| word.strip_suffix(b","))
            .unwrap_or(word);
        let after = self.skip_blanks(v.end);
        !word.is_empty()
            && !is_auth_scheme(word)
            && word.iter().all(u8::is_ascii_alphabetic)
            && after > v.end
            && (b.get(after).is_some_and(u8::is_ascii_alphabetic)
                || marker_len(&b[after..]).is_some())
    }

    /// A random-looking value at `vs` under any other key: a known token,
    /// or high entropy unless the key itself is random or expects it.
    fn random_assigned(&self, name: &[u8], vs: usize) -> Option<Hit> {
        let b = self.b;
        let v = self.value_at(vs, RANDOM_MAX + 1)?;
        if v.truncated
            || v.end - v.start < RANDOM_MIN
            || (!v.quoted && matches!(v.next, b'(' | b'['))
        {
            return None;
        }
        let val = &b[v.start..v.end];
        if !looks_random(val) || is_number(val) {
            return None;
        }
        if let Some((end, kind)) = self.match_token(v.start) {
            return (end == v.end).then_some(Hit::Here(Span {
                start: v.start,
                end,
                kind,
            }));
        }
        // `…3r2=BIkq…` inside base64 is not an assignment: its "key" is random.
        if random_is_expected_under(name) || looks_random(name) {
            return None;
        }
        Some(Hit::Here(Span {
            start: v.start,
            end: v.end,
            kind: HIGH_ENTROPY,
        }))
    }

    /// The key at `start` is the type of a `name: Type` annotation.
    fn follows_annotation_colon(&self, start: usize) -> bool {
        let b = self.b;
        let floor = self.floor();
        let mut j = start;
        while j > floor && matches!(b[j - 1], b' ' | b'\t' | b'&' | b'*') {
            j -= 1;
        }
        // (A name that is, or will be, a marker still counts as a name.)
        j > floor
            && j >= 2
            && b[j - 1] == b':'
            && b[j - 2] != b':'
            && (j - 1 == floor || is_word(b[j - 2]) || marker_ends_at(b, j - 1))
    }

    /// Where the text already redacted in this pass ends: looking back stops
    /// there, so that a second pass (which sees a marker) decides alike.
    fn floor(&self) -> usize {
        self.spans.last().map_or(0, |s| s.end)
    }

    /// `password: str = "..."`, `const KEY: &'static str = "..."`: with `vs`
    /// at the type, the value after the `=` that follows it. `None` when
    /// there is no `type =` at `vs`, else what to redact.
    fn annotated_value(&self, vs: usize, literal: bool, name: &[u8]) -> Option<Option<Span>> {
        let b = self.b;
        let mut j = vs;
        // No `[`: a marker ends the type, so a second pass decides alike.
        // A `:` only in `::` paths (`password: x: = ...` is no type).
        while j < b.len()
            && j - vs < KEY_MAX
            && is_type_char(b[j])
            && (b[j] != b':' || b.get(j + 1) == Some(&b':') || (j > vs && b[j - 1] == b':'))
        {
            j += 1;
        }
        if j == vs || b.get(j) != Some(&b'=') || matches!(b.get(j + 1), Some(b'=' | b'>' | b'~')) {
            return None;
        }
        // A token is no type (and a second pass, seeing its marker, would
        // not read an annotation either).
        if (vs..j).any(|k| self.word_start(k) && self.match_token(k).is_some()) {
            return None;
        }
        Some(
            self.value_at(self.skip_blanks(j + 1), SECRET_VALUE_WINDOW)
                .and_then(|v| self.secret_value(v, literal, name)),
        )
    }

    /// The key name that ends at `end` (before blanks, a closing quote or `]`).
    fn key_before(&self, end: usize) -> Option<Key> {
        let b = self.b;
        let floor = self.floor();
        if end <= floor {
            return None;
        }
        let mut k = end;
        while k > floor && is_blank(b[k - 1]) {
            k -= 1;
        }
        // os.environ["KEY"] = ... (never the `]` of a marker: that needs a quote)
        let bracket = k > floor && b[k - 1] == b']';
        if bracket {
            k -= 1;
        }
        let quote = if k > floor && is_quote(b[k - 1]) {
            k -= 1;
            let q = b[k];
            if k > floor && b[k - 1] == b'\\' {
                k -= 1; // \"key\": in escaped JSON
            }
            Some(q)
        } else if bracket {
            return None;
        } else {
            None
        };
        let ke = k;
        while k > floor && is_key_char(b[k - 1]) && !escape_letter_at(b, k - 1) {
            k -= 1;
            if ke - k > KEY_MAX {
                return None;
            }
        }
        let quoted = match quote {
            Some(q) if k > floor && b[k - 1] == q => true,
            Some(_) => return None,
            None => false,
        };
        while k < ke && matches!(b[k], b'-' | b'.') {
            k += 1;
        }
        if k >= ke || !(b[k].is_ascii_alphabetic() || b[k] == b'_') {
            return None;
        }
        Some(Key {
            start: k,
            end: ke,
            quoted,
        })
    }

    /// The value starting at `vs`: quoted (`"…"`, `'…'`, `` `…` ``, `\"…\"`)
    /// up to its closing quote on the same line, else one unquoted word.
    fn value_at(&self, vs: usize, window: usize) -> Option<Val> {
        let b = self.b;
        let n = b.len();
        if vs >= n {
            return None;
        }
        let q = b[vs];
        if is_quote(q) {
            let s = vs + 1;
            let mut j = s;
            while j < n && j - s < window {
                let c = b[j];
                if c == q {
                    self.fence_at(vs, j);
                    return Some(Val {
                        start: s,
                        end: j,
                        quoted: true,
                        next: q,
                        truncated: false,
                    });
                }
                if c == b'\n' {
                    break;
                }
                j += if c == b'\\' { 2 } else { 1 };
            }
            return Some(self.unquoted(s, window));
        }
        if q == b'\\' && b.get(vs + 1) == Some(&b'"') {
            let s = vs + 2;
            let mut j = s;
            while j + 1 < n && j - s < window && b[j] != b'\n' {
                if b[j] == b'\\' && b[j + 1] == b'"' {
                    self.fence_at(vs, j);
                    return Some(Val {
                        start: s,
                        end: j,
                        quoted: true,
                        next: b'\\',
                        truncated: false,
                    });
                }
                j += 1;
            }
            return Some(self.unquoted(s, window));
        }
        Some(self.unquoted(vs, window))
    }

    /// A quoted value opened at `open` closes at `close`: that becomes the
    /// fence, unless the value is itself inside the fenced one.
    fn fence_at(&self, open: usize, close: usize) {
        if self.fence.get() <= open {
            self.fence.set(close);
        }
    }

    fn unquoted(&self, s: usize, window: usize) -> Val {
        let b = self.b;
        let j = self.unquoted_end(s, s.saturating_add(window));
        let truncated = j < b.len() && !ends_unquoted(b, j);
        Val {
            start: s,
            end: j,
            quoted: false,
            next: b.get(j).copied().unwrap_or(0),
            truncated,
        }
    }

    /// Where the unquoted value from `s` ends, looking up to `limit`. A marker
    /// is part of the value (its `[`, `:` and `]` do not end it), so that a
    /// value reads the same before and after redaction.
    fn unquoted_end(&self, s: usize, limit: usize) -> usize {
        let b = self.b;
        let limit = limit.min(b.len());
        let mut j = s;
        while j < limit {
            if b[j] == b'['
                && let Some(len) = marker_len(&b[j..])
            {
                j += len;
                continue;
            }
            if ends_unquoted(b, j) {
                break;
            }
            j += 1;
        }
        j
    }

    /// The span to redact for a value held by a secret key, if it is data.
    /// `literal` says the context makes bare words data too (`DB_PASS=postgres`
    /// in an env file, a command-line flag) rather than code identifiers.
    fn secret_value(&self, v: Val, literal: bool, key: &[u8]) -> Option<Span> {
        let b = self.b;
        // `Authorization: Bearer <credential>`: keep the scheme.
        let first_end = {
            let mut j = v.start;
            while j < v.end && b[j].is_ascii_alphabetic() {
                j += 1;
            }
            j
        };
        let scheme = &b[v.start..first_end];
        if is_auth_scheme(scheme) && b.get(first_end).is_some_and(|&c| is_blank(c)) {
            let s = self.skip_blanks(first_end);
            let limit = if v.quoted { v.end } else { b.len() };
            if s < limit {
                return self.credential(s, limit);
            }
        }
        if let Some((end, kind)) = self.match_token(v.start)
            && end == v.end
        {
            return Some(Span {
                start: v.start,
                end,
                kind,
            });
        }
        let val = &b[v.start..v.end];
        // `token: "a" | "b"`: a union of string types.
        let union = v.quoted && b.get(self.skip_blanks(v.end + 1)) == Some(&b'|');
        if union
            || generic_benign(val)
            || echoes_key(val, key)
            || (!v.quoted && code_like(val, v.next, literal, key))
        {
            return None;
        }
        let mut end = v.end;
        if v.truncated {
            end = self.unquoted_end(end, usize::MAX);
        }
        Some(Span {
            start: v.start,
            end: self.past_key_block(v.start, end),
            kind: SECRET_ASSIGNMENT,
        })
    }
}

// ---------------------------------------------------------------------------
// Formats with a shape of their own
// ---------------------------------------------------------------------------

/// How far back a command name is looked for on the line of a flag.
const COMMAND_LOOKBACK: usize = 256;

impl Scanner<'_> {
    /// The command before `i`: the text from the start of its line or its
    /// last `;`, `|`, `&` (at most [`COMMAND_LOOKBACK`] bytes), never before
    /// the floor nor a marker (so that a second pass reads the same).
    fn line_before(&self, i: usize) -> &[u8] {
        let b = self.b;
        let from = i.saturating_sub(COMMAND_LOOKBACK).max(self.floor()).min(i);
        let start = b[from..i]
            .iter()
            .rposition(|&c| matches!(c, b'\n' | b';' | b'|' | b'&'))
            .map_or(from, |k| from + k + 1);
        past_markers(&b[start..i])
    }

    /// A command named on the line before `i` (`mysql`, `sshpass`, ...).
    fn line_runs(&self, i: usize, commands: &[&[u8]]) -> bool {
        let line = self.line_before(i);
        commands.iter().any(|c| contains(line, c))
    }

    /// `mysql -pPASSWORD` (the password glued to `-p`), `sshpass -p PASSWORD`,
    /// `docker login -p PASSWORD`; not `mkdir -p`, `ssh -p 2222`, `mysql -p`
    /// (which prompts).
    fn short_password_flag(&self, i: usize) -> Option<Hit> {
        let b = self.b;
        let at = i + 2;
        let glued = b.get(at).is_some_and(|&c| !c.is_ascii_whitespace());
        let vs = if glued {
            if !self.line_runs(i, &[b"mysql", b"mariadb"]) {
                return None;
            }
            at
        } else {
            if !self.line_runs(i, &[b"sshpass", b"login"]) {
                return None;
            }
            let vs = self.skip_blanks(at);
            if vs >= b.len() || b[vs] == b'-' || b[vs] == b'\n' {
                return None;
            }
            vs
        };
        let v = self.value_at(vs, 1024)?;
        self.secret_value(v, true, b"password").map(Hit::Here)
    }

    /// `htpasswd -b[c…] FILE USER PASSWORD`, `htpasswd -nb USER PASSWORD`:
    /// the last argument.
    fn htpasswd_batch(&self, i: usize) -> Option<Hit> {
        let b = self.b;
        let letters = b[i + 1..]
            .iter()
            .take(8)
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        let flags = &b[i + 1..i + 1 + letters];
        if !flags.contains(&b'b')
            || !b.get(i + 1 + letters).is_some_and(|&c| is_blank(c))
            || !self.line_runs(i, &[b"htpasswd"])
        {
            return None;
        }
        let mut wanted = if flags.contains(&b'n') { 2 } else { 3 };
        let mut j = i + 1 + letters;
        for _ in 0..8 {
            let vs = self.skip_blanks(j);
            if vs >= b.len() || b[vs] == b'\n' {
                return None;
            }
            let v = self.value_at(vs, 1024)?;
            if b[vs] != b'-' {
                wanted -= 1;
                if wanted == 0 {
                    // The arguments before it are still scanned.
                    return self.secret_value(v, true, b"password").map(Hit::Ahead);
                }
            }
            j = if v.quoted { v.end + 1 } else { v.end };
            if j <= vs {
                return None;
            }
        }
        None
    }

    /// `aws configure set aws_secret_access_key VALUE` (and any `configure
    /// set` of a key that names a secret).
    fn configure_set(&self, i: usize) -> Option<Span> {
        let b = self.b;
        if !b[i..].starts_with(b"set ")
            || !self.line_before(i).trim_ascii_end().ends_with(b"configure")
        {
            return None;
        }
        let ks = self.skip_blanks(i + 4);
        let mut ke = ks;
        while ke < b.len() && ke - ks <= KEY_MAX && is_key_char(b[ke]) {
            ke += 1;
        }
        if ke == ks || !b.get(ke).is_some_and(|&c| is_blank(c)) || !names_secret(&b[ks..ke]) {
            return None;
        }
        let v = self.value_at(self.skip_blanks(ke), SECRET_VALUE_WINDOW)?;
        self.secret_value(v, true, &b[ks..ke])
    }

    /// `PASSWORD 'literal'` (SQL: `CREATE USER … WITH PASSWORD '…'`) and a
    /// `.netrc` entry (`machine … login … password VALUE`).
    fn password_word(&self, i: usize) -> Option<Span> {
        let b = self.b;
        let word = b"password";
        if let Some(span) = self.stated_password(i) {
            return Some(span);
        }
        if !starts_with_ignore_case(&b[i..], word)
            || !b.get(i + word.len()).is_some_and(|&c| is_blank(c))
        {
            return None;
        }
        let vs = self.skip_blanks(i + word.len());
        let quoted = b.get(vs).is_some_and(|&c| c == b'\'' || c == b'"');
        let netrc = {
            let from = i.saturating_sub(512).max(self.floor());
            let before = past_markers(&b[from..i]);
            contains(before, b"machine ") && contains(before, b"login ")
        };
        if !quoted && !netrc {
            return None;
        }
        let v = self.value_at(vs, 1024)?;
        if quoted && !v.quoted {
            return None;
        }
        self.secret_value(v, true, word)
    }

    /// Under a key that is only `pass` or `pwd` (a test's status, the
    /// working directory), a plain word or identifier (`TestParse`,
    /// `homeDir + …`) is not a password: only a value with a digit or a
    /// symbol is.
    fn word_under_bare_abbreviation(&self, v: Val, key_start: usize, key_end: usize) -> bool {
        let b = self.b;
        // Inside JSON text, `\tPwd` is a tab, then `Pwd`.
        let start = if key_start + 1 < key_end && escape_letter_at(b, key_start) {
            key_start + 1
        } else {
            key_start
        };
        let name = &b[start..key_end];
        let bare = [b"pass".as_slice(), b"pwd"]
            .iter()
            .any(|w| name.eq_ignore_ascii_case(w));
        bare && self.b[v.start..v.end]
            .iter()
            .all(|&c| c.is_ascii_alphabetic() || c == b'_')
    }

    /// A password stated in words: `password is X`, `password was X`,
    /// `password to X` (also `passphrase`, `passcode`), where X is quoted or
    /// looks like a password (letters with a digit or a symbol), not a word
    /// of the sentence (`the password is required`).
    fn stated_password(&self, i: usize) -> Option<Span> {
        let b = self.b;
        let word_len = [b"password".as_slice(), b"passphrase", b"passcode"]
            .iter()
            .find(|w| starts_with_ignore_case(&b[i..], w))?
            .len();
        let mut j = i + word_len;
        if b.get(j) != Some(&b' ') {
            return None;
        }
        j += 1;
        let verb_len = [b"is ".as_slice(), b"was ", b"to ", b"now is ", b"will be "]
            .iter()
            .find(|v| b[j..].starts_with(v))?
            .len();
        let vs = self.skip_blanks(j + verb_len);
        let v = self.value_at(vs, 256)?;
        let mut end = v.end;
        if !v.quoted {
            while end > v.start && matches!(b[end - 1], b'.' | b',' | b';' | b'!' | b'?' | b')') {
                end -= 1;
            }
        }
        let val = &b[v.start..end];
        let looks_like_password = val.len() >= 6
            && val.iter().any(u8::is_ascii_alphabetic)
            && val.iter().any(|c| !c.is_ascii_alphabetic());
        let data = if v.quoted {
            val.len() >= 4
        } else {
            looks_like_password
        };
        if !data || generic_benign(val) || placeholder_phrase(val) || holds_marker(val) {
            return None;
        }
        Some(Span {
            start: v.start,
            end,
            kind: SECRET_ASSIGNMENT,
        })
    }

    /// `echo X | base64 -d` (or `printf`, `--decode`, `-D`) where X decodes
    /// to `user:password`: X.
    fn echo_into_decoder(&self, i: usize) -> Option<Span> {
        let b = self.b;
        let cmd_len = [b"echo ".as_slice(), b"printf "]
            .iter()
            .find(|c| b[i..].starts_with(c))?
            .len();
        let line_end = b[i..]
            .iter()
            .take(COMMAND_LOOKBACK)
            .position(|&c| c == b'\n')
            .map_or((i + COMMAND_LOOKBACK).min(b.len()), |k| i + k);
        let line = &b[i..line_end];
        let pipe = line.iter().position(|&c| c == b'|')?;
        let after = &line[pipe + 1..];
        let decodes = contains(after, b"base64")
            && (contains(after, b" -d") || contains(after, b"--decode") || contains(after, b" -D"));
        if !decodes {
            return None;
        }
        let mut vs = self.skip_blanks(i + cmd_len);
        while b.get(vs) == Some(&b'-') {
            let flag_end = self.unquoted_end(vs, line_end);
            vs = self.skip_blanks(flag_end);
        }
        let v = self.value_at(vs, 1024)?;
        let decoded = decode_base64(&b[v.start..v.end])?;
        let credentials = decoded.iter().all(|c| c.is_ascii_graphic() || *c == b' ')
            && decoded
                .iter()
                .position(|&c| c == b':')
                .is_some_and(|k| k > 0 && k + 1 < decoded.len());
        credentials.then_some(Span {
            start: v.start,
            end: v.end,
            kind: "basic-credentials",
        })
    }

    /// `<bot id>:<token>` of a Telegram bot (`/bot6148301927:AAzj…`), with
    /// `i` at the colon: the token.
    fn telegram_token(&self, i: usize) -> Option<Span> {
        let b = self.b;
        let floor = self.floor();
        let mut k = i;
        while k > floor && i - k <= 10 && b[k - 1].is_ascii_digit() {
            k -= 1;
        }
        let digits = i - k;
        let bot_prefix = k >= 3 && b[k - 3..k].eq_ignore_ascii_case(b"bot");
        if !(8..=10).contains(&digits) || !(k == floor || !is_word(b[k - 1]) || bot_prefix) {
            return None;
        }
        let s = i + 1;
        let end = self.run_of(s, Set::Base64Url, 36);
        (end - s == 35 && self.word_end(end) && Mix::DigitAndLetter.accepts(&b[s..end])).then_some(
            Span {
                start: s,
                end,
                kind: "telegram-bot-token",
            },
        )
    }

    /// Assignments whose key is not a secret word but whose value is a
    /// secret all the same: the `sig=` of an Azure SAS URL, PuTTY's private
    /// lines and MAC. `None` when the key is none of those.
    fn special_assignment(&self, c: u8, key: Key, name: &[u8], vs: usize) -> Option<Option<Hit>> {
        let b = self.b;
        if c == b'=' && name == b"sig" && key.start > 0 && matches!(b[key.start - 1], b'&' | b'?') {
            let mut end = vs;
            while end < b.len()
                && end - vs < 1024
                && (b[end].is_ascii_alphanumeric() || matches!(b[end], b'%' | b'+' | b'/' | b'='))
            {
                end += 1;
            }
            return Some((end - vs >= 16).then_some(Hit::Here(Span {
                start: vs,
                end,
                kind: "azure-sas-signature",
            })));
        }
        if c != b':' {
            return None;
        }
        if name.eq_ignore_ascii_case(b"Private-MAC") {
            let v = self.value_at(vs, 256)?;
            return Some(
                (!holds_marker(&b[v.start..v.end]) && v.end > v.start).then_some(Hit::Here(Span {
                    start: v.start,
                    end: v.end,
                    kind: PRIVATE_KEY,
                })),
            );
        }
        if name.eq_ignore_ascii_case(b"Private-Lines") {
            return Some(self.following_base64_lines(vs).map(Hit::Ahead));
        }
        None
    }

    /// The lines after the one holding `from` that are base64 only (the
    /// body of a PuTTY key), as one span.
    fn following_base64_lines(&self, from: usize) -> Option<Span> {
        let b = self.b;
        let first = from + b[from..].iter().position(|&c| c == b'\n')? + 1;
        let mut end = first;
        let mut j = first;
        while j < b.len() {
            let line_end = b[j..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |k| j + k);
            let line = b[j..line_end]
                .strip_suffix(b"\r")
                .unwrap_or(&b[j..line_end]);
            if line.is_empty() || !line.iter().all(|&c| is_base64(c)) {
                break;
            }
            end = j + line.len();
            j = line_end + 1;
        }
        (end > first).then_some(Span {
            start: first,
            end,
            kind: PRIVATE_KEY,
        })
    }

    /// `password: |` (or `>`, `|-`, `>+2`, …): a YAML block scalar under a
    /// secret key; its lines (those indented deeper than the key's line)
    /// are the value. `None` when the value is no block indicator.
    fn yaml_block_scalar(&self, key_start: usize, vs: usize) -> Option<Option<Span>> {
        let b = self.b;
        if !matches!(b[vs], b'|' | b'>') {
            return None;
        }
        let mut j = vs + 1;
        while j < b.len() && (matches!(b[j], b'-' | b'+') || b[j].is_ascii_digit()) && j - vs < 4 {
            j += 1;
        }
        let j = self.skip_blanks(j);
        if j < b.len() && !matches!(b[j], b'\n' | b'\r' | b'#') {
            return None;
        }
        let line_start = b[..key_start]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |k| k + 1);
        let indent = b[line_start..].iter().take_while(|&&c| c == b' ').count();
        let Some(nl) = b[j..].iter().position(|&c| c == b'\n') else {
            return Some(None);
        };
        let mut k = j + nl + 1;
        let (mut start, mut end) = (None, k);
        while k < b.len() {
            let line_end = b[k..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |e| k + e);
            let line = &b[k..line_end];
            let spaces = line.iter().take_while(|&&c| c == b' ').count();
            let blank = line.iter().all(|c| c.is_ascii_whitespace());
            if !blank && spaces <= indent {
                break;
            }
            if !blank {
                start.get_or_insert(k + spaces);
                end = line_end;
            }
            k = line_end + 1;
        }
        let start = start?;
        let value = &b[start..end];
        Some((!holds_marker(value) || value.len() > 64).then_some(Span {
            start,
            end,
            kind: SECRET_ASSIGNMENT,
        }))
    }

    /// `-----END … PRIVATE KEY-----` with no BEGIN line before it (a view of
    /// part of a key file): the base64 lines right before it, and the line.
    fn orphan_key_end(&self, i: usize) -> Option<Span> {
        let b = self.b;
        let ls = i + "-----END ".len();
        let le = self.label_end(ls)?;
        if !is_private_label(&b[ls..le]) {
            return None;
        }
        let floor = self.floor();
        let mut start = i;
        // `start` is the start of the earliest body line found so far.
        while start > floor && b[start - 1] == b'\n' {
            let end = start - 1;
            let mut s = end;
            while s > floor && b[s - 1] != b'\n' && end - s <= 128 {
                s -= 1;
            }
            let line = b[s..end].strip_suffix(b"\r").unwrap_or(&b[s..end]);
            let line = line.trim_ascii_start();
            if line.len() < 16 || line.len() > 128 || !line.iter().all(|&c| is_base64(c)) {
                break;
            }
            start = s;
        }
        (start < i).then_some(Span {
            start,
            end: le + 5,
            kind: PRIVATE_KEY,
        })
    }

    /// Spans for the cells of CSV columns whose header names a secret (the
    /// AWS console's credentials file: `User name,Password,Access key
    /// ID,Secret access key,…`). One pass over the lines.
    fn csv_secret_columns(&self) -> Vec<Span> {
        let mut spans = Vec::new();
        if !self.b.contains(&b',') {
            return spans;
        }
        // (`str::split` on a byte finds line breaks with memchr.)
        let mut lines = self.text.split('\n').scan(0, |at, line| {
            let start = *at;
            *at += line.len() + 1;
            Some((start, line.strip_suffix('\r').unwrap_or(line).as_bytes()))
        });
        let mut header = lines.next();
        while let Some((_, line)) = header {
            // A header starts its line (code is indented) and has a comma;
            // most lines fail on their first byte.
            let plain = line
                .first()
                .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'"')
                && line.contains(&b',')
                && line
                    .iter()
                    .position(|&c| !is_header_byte(c))
                    .is_none_or(|k| line[k] == b'"');
            let columns = match plain {
                true => csv_header_secrets(line),
                false => None,
            };
            header = lines.next();
            let Some(columns) = columns else {
                continue;
            };
            let width = line.iter().filter(|&&c| c == b',').count() + 1;
            // The rows: lines of the same width.
            while let Some((row_start, row)) = header {
                if row.iter().filter(|&&c| c == b',').count() + 1 != width {
                    break;
                }
                let mut cell_start = row_start;
                for (col, cell) in row.split(|&c| c == b',').enumerate() {
                    let (s, e) = trim_cell(cell);
                    if columns & (1 << col) != 0 && !generic_benign(&cell[s..e]) {
                        spans.push(Span {
                            start: cell_start + s,
                            end: cell_start + e,
                            kind: "secret-column",
                        });
                    }
                    cell_start += cell.len() + 1;
                }
                header = lines.next();
            }
        }
        spans
    }
}

/// What of `seg` follows its last marker (all of it when it holds none).
fn past_markers(seg: &[u8]) -> &[u8] {
    match seg.windows(MARKER.len()).rposition(|w| w == MARKER) {
        Some(k) => {
            let len = marker_len(&seg[k..]).unwrap_or(MARKER.len());
            &seg[(k + len).min(seg.len())..]
        }
        None => seg,
    }
}

/// A byte of a CSV header line without quotes.
fn is_header_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b' ' | b'_' | b'-' | b',')
}

fn is_base64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=')
}

/// A CSV header (2 to 64 short column names) with columns that name a
/// secret: their bit set.
fn csv_header_secrets(line: &[u8]) -> Option<u64> {
    if !line.contains(&b',') {
        return None;
    }
    let mut columns = 0u64;
    for (col, name) in line.split(|&c| c == b',').enumerate() {
        let name = name.trim_ascii();
        let name = name
            .strip_prefix(b"\"")
            .and_then(|n| n.strip_suffix(b"\""))
            .unwrap_or(name);
        if col >= 64
            || name.is_empty()
            || name.len() > 40
            || !name[0].is_ascii_alphabetic()
            || !name
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b' ' | b'_' | b'-'))
        {
            return None;
        }
        if names_secret(name) {
            columns |= 1 << col;
        }
    }
    (columns != 0).then_some(columns)
}

/// The bounds of a cell's value within it: blanks and quotes trimmed.
fn trim_cell(cell: &[u8]) -> (usize, usize) {
    let mut s = 0;
    let mut e = cell.len();
    while s < e && matches!(cell[s], b' ' | b'\t' | b'"') {
        s += 1;
    }
    while e > s && matches!(cell[e - 1], b' ' | b'\t' | b'"') {
        e -= 1;
    }
    (s, e)
}

fn is_private_label(label: &[u8]) -> bool {
    label.ends_with(b"PRIVATE KEY") || label.ends_with(b"PRIVATE KEY BLOCK")
}

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------

/// Values that stand for a secret without being one.
#[rustfmt::skip]
const NOT_SECRET_WORDS: &[&str] = &[
    "true", "false", "null", "nil", "none", "undefined", "yes", "no", "on", "off", "required",
    "optional", "empty", "redacted", "hidden", "masked", "secret", "secrets", "password",
    "passwd", "token", "changeme", "change_me", "changeit", "example", "sample", "test",
    "dummy", "fake", "placeholder", "todo", "fixme", "tbd", "xxx", "string", "str", "bool",
    "boolean", "int", "integer", "number", "float", "any", "object", "unknown", "never", "void",
    "self", "this", "new", "default", "env", "inherit", "disabled", "enabled", "expired",
    "invalid", "missing", "failed", "failure", "success", "ok", "error", "denied", "unset",
    "ask", "prompt", "stdin", "basic", "bearer", "auto", "local", "option", "some", "await",
    "async", "function", "lambda", "const", "let", "var", "return", "typeof", "keyof",
    "readonly", "public", "private", "protected", "static", "final", "value", "values", "usize",
    "isize", "u8", "u16", "u32", "u64", "u128", "i8", "i16", "i32", "i64", "i128", "f32", "f64",
    "char", "bytes", "vec", "box", "arc", "rc", "cow", "pass", "foo", "bar", "baz", "qux", "read",
    "write",
];

/// True for values that are clearly not a secret in any context: empty or
/// short, references (`$VAR`, `${VAR}`, `{{ x }}`, `%VAR%`, `{name}`),
/// placeholders (`<token>`, `YOUR_API_KEY`, `changeme`), masks (`****`),
/// keywords, numbers, paths, URLs (whose credentials are found on their own)
/// and our markers.
fn generic_benign(v: &[u8]) -> bool {
    let v = v.trim_ascii();
    // Holding a marker: an earlier pass kept this value and redacted what was
    // secret inside it, so keep it again (redaction stays idempotent).
    if v.len() < 4 || (v.len() < 16 && char_count(v) < 4) || holds_marker(v) {
        return true;
    }
    match v[0] {
        b'$' => return is_reference(v),
        b'<' if v.ends_with(b">") => return true,
        b'{' => return true,
        b'%' if v.ends_with(b"%") || v[1] == b'(' => return true,
        b'#' if v[1] == b'{' => return true,
        _ => {}
    }
    // `#976806`, `#fff`
    if v[0] == b'#' && matches!(v.len(), 4 | 7 | 9) && v[1..].iter().all(u8::is_ascii_hexdigit) {
        return true;
    }
    if v.iter()
        .all(|c| matches!(c, b'*' | b'x' | b'X' | b'.' | b'#' | b'-' | b'_'))
    {
        return true;
    }
    if is_number(v) || is_path(v) || contains(v, b"://") {
        return true;
    }
    if is_not_secret_word(v) {
        return true;
    }
    // YOUR_API_KEY, your-token-here, yourPassword
    v.len() > 4
        && v[..4].eq_ignore_ascii_case(b"your")
        && (matches!(v[4], b'_' | b'-' | b' ' | b'.') || v[4].is_ascii_uppercase())
}

/// A label that spells the key or its last words: `PRIVATE_KEY =
/// "private-key"`, `OID.CLIENT_AUTH: "clientAuth"` (but `POSTGRES_PASSWORD:
/// postgres` is a password).
fn echoes_key(v: &[u8], key: &[u8]) -> bool {
    if v.len() > KEY_MAX
        || !v
            .iter()
            .all(|&c| c.is_ascii_alphabetic() || matches!(c, b'-' | b'_' | b'.' | b' '))
    {
        return false;
    }
    let (vw, kw) = (KeyWords::of(v), KeyWords::of(key));
    let in_key = |w: &[u8]| (0..kw.count).any(|k| kw.word(k) == w);
    // The key's last words (`clientAuth`), or several of its words
    // (`JSON_ERROR_KEY = 'jsonError'`).
    let suffix = vw.count <= kw.count
        && (0..vw.count).all(|k| vw.word(k) == kw.word(kw.count - vw.count + k));
    vw.count > 0 && (suffix || (vw.count >= 2 && (0..vw.count).all(|k| in_key(vw.word(k)))))
}

fn is_auth_scheme(word: &[u8]) -> bool {
    [&b"bearer"[..], b"basic", b"token", b"bot"]
        .iter()
        .any(|s| word.eq_ignore_ascii_case(s))
}

/// Characters in `v` (a slice of the text at ASCII boundaries, so UTF-8).
fn char_count(v: &[u8]) -> usize {
    v.iter().filter(|&&c| c & 0xC0 != 0x80).count()
}

fn is_not_secret_word(v: &[u8]) -> bool {
    NOT_SECRET_WORDS
        .iter()
        .any(|w| w.as_bytes().eq_ignore_ascii_case(v))
}

/// Made of placeholder words and digits only: `token123`, `test-token`,
/// `my_secret_1`.
fn placeholder_phrase(v: &[u8]) -> bool {
    let mut words = v
        .split(|c| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .peekable();
    words.peek().is_some()
        && words.all(|w| {
            is_not_secret_word(w)
                || [
                    &b"my"[..],
                    b"your",
                    b"api",
                    b"key",
                    b"here",
                    b"abc",
                    b"xyz",
                    b"demo",
                ]
                .iter()
                .any(|p| w.eq_ignore_ascii_case(p))
        })
}

/// `$VAR`, `${VAR}`, `$(command)`, `$env:VAR`.
fn is_reference(v: &[u8]) -> bool {
    match v.get(1) {
        None => true,
        Some(b'{' | b'(') => true,
        Some(&c) if c.is_ascii_alphabetic() || c == b'_' => {
            v[1..].iter().all(|&c| is_word(c)) || starts_with_ignore_case(v, b"$env:")
        }
        _ => false,
    }
}

/// A number, possibly a typed or prefixed literal: `42`, `-1.5e3`, `1_000`,
/// `2u32`, `0x8009_8031_u32`, `12345n`.
fn is_number(v: &[u8]) -> bool {
    let v = v
        .strip_prefix(b"-")
        .or_else(|| v.strip_prefix(b"+"))
        .unwrap_or(v);
    let (digits, radix_digit): (&[u8], fn(&u8) -> bool) = match v {
        [b'0', b'x' | b'X', rest @ ..] => (rest, u8::is_ascii_hexdigit),
        [b'0', b'b' | b'B' | b'o' | b'O', rest @ ..] => (rest, u8::is_ascii_digit),
        _ => (v, u8::is_ascii_digit),
    };
    let body = digits
        .iter()
        .take_while(|&c| radix_digit(c) || matches!(c, b'.' | b'_' | b','))
        .count();
    let suffix = &digits[body..];
    digits[..body].iter().any(radix_digit)
        && (suffix.is_empty()
            || (suffix.len() <= 5
                && suffix[0].is_ascii_alphabetic()
                && suffix.iter().all(u8::is_ascii_alphanumeric)
                && !suffix[1..].iter().any(u8::is_ascii_alphabetic))
            || matches!(suffix, b"usize" | b"isize" | b"e" | b"E"))
}

fn is_path(v: &[u8]) -> bool {
    let rooted = v[0] == b'/'
        && (v[1].is_ascii_alphabetic() || matches!(v[1], b'.' | b'_' | b'/' | b'~'))
        && !v.contains(&b'+')
        && !v.ends_with(b"=");
    rooted
        || v.starts_with(b"./")
        || v.starts_with(b"../")
        || v.starts_with(b"~/")
        || (v[0].is_ascii_alphabetic() && v[1] == b':' && matches!(v[2], b'\\' | b'/'))
}

/// An unquoted value that reads as code rather than data: a call or index
/// (`getpass()`, `os.environ[...]`), a member path (`self.token`,
/// `process.env.API_KEY`), or — unless the context is literal — an
/// identifier (`token: token,`, `password = user_password`, `token: Token`).
fn code_like(v: &[u8], next: u8, literal: bool, key: &[u8]) -> bool {
    // Calls, indexing, member paths, pointers and negations.
    if matches!(next, b'(' | b'[') || is_member_path(v) || matches!(v[0], b'*' | b'!') {
        return true;
    }
    // `x` or `a.b.C`: identifiers, possibly dotted (`ed25519.Ed25519PrivateKey`).
    let identifier = v.split(|&c| c == b'.').all(|seg| {
        seg.first()
            .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
            && seg.iter().all(|&c| is_word(c))
    });
    if !identifier {
        return false;
    }
    // `FIELD: u32,` `KEY = other_name;` `f(token=token)`, `self.token = nextchar`
    if matches!(next, b',' | b';' | b')' | b']' | b'}')
        || key.starts_with(b"self.")
        || key.starts_with(b"this.")
    {
        return true;
    }
    if literal || !v.iter().all(|&c| c.is_ascii_alphabetic() || c == b'_') {
        return false;
    }
    // `AsChar`, `Token`, `user_password`, `token: token`
    let type_name = v[0].is_ascii_uppercase();
    let same_as_key = key.len() >= v.len() && key[key.len() - v.len()..].eq_ignore_ascii_case(v);
    v.contains(&b'_') || type_name || same_as_key
}

/// `a.b`, `a::b`, ... with identifier segments, one of them a plain
/// lower-case word (so `p4ss.w0rd` is not one).
fn is_member_path(v: &[u8]) -> bool {
    let mut segments = 0;
    let mut plain_word = false;
    for seg in v.split(|&c| c == b'.' || c == b':') {
        if seg.is_empty() {
            continue; // the empty piece between the two colons of `::`
        }
        if !(seg[0].is_ascii_alphabetic() || seg[0] == b'_') || !seg.iter().all(|&c| is_word(c)) {
            return false;
        }
        // A word: `self`, `environ`, `Builtin` (not `p4ss`, `w0rd`, `X`).
        plain_word |= seg.len() >= 3 && seg.iter().all(|&c| c.is_ascii_alphabetic() || c == b'_');
        segments += 1;
    }
    // `::` paths (`S::Token`, `Secret::new`) are code whatever their case.
    segments >= 2
        && (plain_word || contains(v, b"::"))
        && !v.ends_with(b".")
        && !v.starts_with(b".")
}

/// Looks like a random token rather than a word, an identifier, a hash or a
/// UUID: 20 to 256 bytes of base64 alphabet with upper case, lower case and
/// digits, not made of words, and of high Shannon entropy.
fn looks_random(v: &[u8]) -> bool {
    if !(RANDOM_MIN..=RANDOM_MAX).contains(&v.len()) {
        return false;
    }
    let (mut upper, mut lower, mut digit) = (0usize, 0usize, 0usize);
    let mut counts = [0u16; 128];
    for (k, &c) in v.iter().enumerate() {
        match c {
            b'A'..=b'Z' => upper += 1,
            b'a'..=b'z' => lower += 1,
            b'0'..=b'9' => digit += 1,
            b'+' | b'/' | b'_' | b'-' => {}
            // `=` only pads the end of base64: `NAME=value` is an assignment.
            b'=' if v[k..].iter().all(|&c| c == b'=') => {}
            _ => return false,
        }
        counts[c as usize] += 1;
    }
    if upper == 0 || lower == 0 || digit == 0 {
        return false;
    }
    // Made of words (`camelCaseName2024`, `Win32_Data_Xml`): letters in
    // `[A-Z]?[a-z]{2,}` segments of three or more. About 60% or more of an
    // identifier; fewer than that in 95% of random 20-byte tokens (98% of
    // 32-byte ones).
    let mut wordy = 0;
    let mut k = 0;
    while k < v.len() {
        let s = k;
        if v[k].is_ascii_uppercase() {
            k += 1;
        }
        let lower_from = k;
        while k < v.len() && v[k].is_ascii_lowercase() {
            k += 1;
        }
        if k - lower_from >= 2 && k - s >= 3 {
            wordy += k - s;
        }
        if k == s {
            k += 1;
        }
    }
    let separators = v.iter().filter(|&&c| c == b'-' || c == b'_').count();
    if wordy * 10 >= v.len() * 6 || separators >= (v.len() / 6).max(4) {
        return false;
    }
    let len = v.len() as f64;
    let entropy: f64 = counts
        .iter()
        .filter(|&&k| k > 0)
        .map(|&k| {
            let p = f64::from(k) / len;
            -p * p.log2()
        })
        .sum();
    entropy >= (len.log2() - 0.8).min(4.0)
}

/// Keys whose values are random by nature and not secret: identifiers,
/// hashes, content.
fn random_is_expected_under(key: &[u8]) -> bool {
    // (Under a key that does not name a secret, a `token` is a page or
    // continuation token: `nextPageToken`.)
    #[rustfmt::skip]
    const EXPECTED: &[&str] = &[
        "id", "ids", "uuid", "guid", "uid", "hash", "sha", "sha1", "sha256", "sha512", "md5",
        "digest", "checksum", "integrity", "etag", "commit", "rev", "revision", "ref", "oid",
        "version", "cursor", "nonce", "name", "path", "file", "url", "uri", "href", "src",
        "class", "classname", "style", "title", "type", "kind", "color", "colour", "slug",
        "label", "message", "text", "description", "signature", "sig", "data", "image",
        "content", "body", "base64", "blob", "bytes", "payload", "fingerprint", "token",
        "tokens",
    ];
    let words = KeyWords::of(key);
    words
        .head()
        .is_some_and(|h| EXPECTED.iter().any(|w| w.as_bytes() == h))
}

// ---------------------------------------------------------------------------
// Key names
// ---------------------------------------------------------------------------

/// The words of a key name, lower-cased: `AWS_SECRET_ACCESS_KEY`,
/// `awsSecretAccessKey`, `x-aws-secret-access-key` all give
/// `aws secret access key`; `APIKey` gives `api key`.
struct KeyWords {
    buf: [u8; KEY_MAX],
    words: [(u8, u8); 12],
    count: usize,
}

impl KeyWords {
    fn of(key: &[u8]) -> KeyWords {
        // Only the tail matters for long keys: the head word is last.
        let key = &key[key.len().saturating_sub(KEY_MAX)..];
        let mut kw = KeyWords {
            buf: [0; KEY_MAX],
            words: [(0, 0); 12],
            count: 0,
        };
        let mut start: Option<usize> = None;
        for (j, &c) in key.iter().enumerate() {
            kw.buf[j] = c.to_ascii_lowercase();
            if !c.is_ascii_alphanumeric() {
                if let Some(s) = start.take() {
                    kw.push(s, j);
                }
                continue;
            }
            let Some(s) = start else {
                start = Some(j);
                continue;
            };
            let prev = key[j - 1];
            let camel = c.is_ascii_uppercase()
                && (prev.is_ascii_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_ascii_uppercase()
                        && key.get(j + 1).is_some_and(u8::is_ascii_lowercase)));
            if camel {
                kw.push(s, j);
                start = Some(j);
            }
        }
        if let Some(s) = start {
            kw.push(s, key.len());
        }
        // `api_key_2`: trailing numbers are not the head word.
        while kw.count > 0 && kw.word(kw.count - 1).iter().all(u8::is_ascii_digit) {
            kw.count -= 1;
        }
        kw
    }

    fn push(&mut self, s: usize, e: usize) {
        // Keep the last words when there are too many.
        if self.count == self.words.len() {
            self.words.copy_within(1.., 0);
            self.count -= 1;
        }
        self.words[self.count] = (s as u8, e as u8);
        self.count += 1;
    }

    fn word(&self, k: usize) -> &[u8] {
        let (s, e) = self.words[k];
        &self.buf[s as usize..e as usize]
    }

    fn head(&self) -> Option<&[u8]> {
        (self.count > 0).then(|| self.word(self.count - 1))
    }
}

fn is_one_of(word: &[u8], list: &[&str]) -> bool {
    list.iter().any(|w| w.as_bytes() == word)
}

/// Words that make a key name a secret wherever they appear in it.
#[rustfmt::skip]
const SECRET_WORDS: &[&str] = &[
    "password", "passwords", "passwd", "passphrase", "pwd", "secret", "secrets", "credential",
    "credentials", "creds", "apikey", "privatekey", "accesskey", "secretkey", "authtoken",
    "accesstoken", "refreshtoken", "clientsecret", "auth", "authorization", "cookie", "cookies",
];

/// Last words that make a key describe a secret rather than hold one
/// (`password_hint`, `token_count`, `auth_url`, `private_key_path`).
#[rustfmt::skip]
const DESCRIPTIVE_HEADS: &[&str] = &[
    "count", "counts", "number", "length", "len", "size", "min", "max", "limit", "limits", "type",
    "start", "starts", "end", "ends", "begin", "pos", "comment", "comments",
    "types", "kind", "name", "names", "id", "ids", "hint", "hints", "policy", "url", "uri",
    "urls", "endpoint", "path", "paths", "file", "files", "filename", "dir", "directory",
    "location", "prompt", "label", "placeholder", "pattern", "regex", "format", "field",
    "fields", "env", "var", "variable", "enabled", "disabled", "required", "enable", "disable",
    "expiry", "expires", "expiration", "expired", "ttl", "timeout", "lifetime", "age", "at",
    "time", "timestamp", "date", "created", "updated", "version", "algorithm", "alg",
    "strength", "rule", "rules", "mode", "method", "methods", "provider", "providers", "scheme",
    "source", "helper", "manager", "cmd", "command", "script", "prefix", "suffix", "index",
    "position", "offset", "budget", "usage", "used", "remaining", "param", "parameter", "arg",
    "argument", "option", "options", "flag", "flags", "status", "state", "error", "errors",
    "message", "msg", "input", "box", "form", "button", "icon", "validator", "validation",
    "stdin", "fingerprint", "arn", "ref", "reference", "mount", "configured", "set", "present",
    "missing", "exists", "valid", "invalid", "rotation", "reset", "schema", "template",
    "description", "desc", "help", "title", "header", "class", "style", "chars", "digits",
];

/// Words that turn `token` into something that is not a credential
/// (`next_page_token`, `max_output_tokens`, `prompt_token`).
#[rustfmt::skip]
const TOKEN_CONTEXTS: &[&str] = &[
    "page", "next", "continuation", "pagination", "cursor", "max", "min", "num", "input",
    "output", "total", "prompt", "completion", "cache", "reasoning", "limit", "remaining",
    "used", "usage", "sync", "progress",
];

/// Words before `key` that make it a lookup key, not a credential
/// (`primary_key`, `sort_key`, `cache_key`, `public_key`).
#[rustfmt::skip]
const ORDINARY_KEYS: &[&str] = &[
    "primary", "foreign", "sort", "partition", "range", "hash", "cache", "lookup", "map",
    "dict", "row", "column", "col", "composite", "unique", "public", "pub", "object",
    "idempotency", "dedup", "dedupe", "group", "order", "index", "shortcut", "hot", "route",
    "routing", "item", "list", "registry", "config", "setting", "settings", "translation",
    "i18n", "message", "msg", "label", "field", "attr", "attribute", "property", "prop", "json",
    "form",
    "yaml", "env", "name", "storage", "bucket", "s3", "query", "search", "natural", "surrogate",
    "candidate", "super", "distribution", "dist", "cluster", "shard", "join", "match",
    "compound", "next", "prev", "previous", "last", "first", "start", "end", "cursor",
    "continuation", "page", "event", "metric", "tag", "state", "store", "redis", "kv", "table",
    "record", "entity", "model", "react", "component", "child", "parent", "node", "element",
    "dom", "keyboard", "press", "pressed", "modifier", "escape", "enter", "tab", "arrow", "up",
    "down", "left", "right", "ctrl", "alt", "shift", "meta", "mod", "host", "verify",
    "verification", "lock", "job", "task", "queue", "topic", "stream", "feature", "version",
    "locale", "lang", "id", "value", "menu", "nav", "sorting", "grouping", "ordering",
    "dictionary", "sign_in", "option",
];

/// Words before `key` that make it a credential in any naming style
/// (`api_key`, `signingKey`); other `*_KEY` names count only in the
/// upper-case style of environment variables (`STRIPE_KEY`).
#[rustfmt::skip]
const CREDENTIAL_KEYS: &[&str] = &[
    "api", "access", "secret", "private", "signing", "sign", "encryption", "encrypt", "decrypt",
    "decryption", "master", "client", "auth", "license", "licence", "ssh", "gpg", "pgp", "session",
    "app", "application", "service", "account", "admin", "deploy", "webhook", "jwt", "hmac", "aes",
    "rsa", "cipher", "crypto", "root", "shared", "consumer", "subscription", "storage",
    "openai", "anthropic", "stripe", "github", "gitlab", "slack", "aws", "gcp", "azure", "google",
];

/// Quick test on the raw key: can it name a secret at all? (Most keys in code
/// cannot, and this avoids splitting them into words.)
fn mentions_secret_stem(key: &[u8]) -> bool {
    const STEMS: &[&[u8]] = &[
        b"pas", b"pwd", b"secret", b"token", b"key", b"auth", b"cred", b"cookie",
    ];
    (0..key.len()).any(|j| {
        matches!(key[j] | 0x20, b'p' | b's' | b't' | b'k' | b'a' | b'c')
            && STEMS.iter().any(|s| starts_with_ignore_case(&key[j..], s))
    })
}

fn names_secret(key: &[u8]) -> bool {
    // `tokenData.cidr_whitelist` is a whitelist: the last segment decides.
    let key = match key.iter().rposition(|&c| c == b'.') {
        Some(dot) if dot + 1 < key.len() => &key[dot + 1..],
        _ => key,
    };
    if key.is_empty() || !mentions_secret_stem(key) {
        return false;
    }
    let words = KeyWords::of(key);
    let Some(head) = words.head() else {
        return false;
    };
    if is_one_of(head, DESCRIPTIVE_HEADS) {
        return false;
    }
    let env_style =
        key.iter().any(u8::is_ascii_uppercase) && !key.iter().any(u8::is_ascii_lowercase);
    let last = words.count - 1;
    (0..words.count).any(|k| {
        let w = words.word(k);
        if is_one_of(w, SECRET_WORDS) {
            return true;
        }
        // Run together: `PGPASSWORD`, `GHTOKEN`, `dbpasswd`.
        let w = [&b"password"[..], b"passwd", b"secret", b"token"]
            .into_iter()
            .find(|s| w.len() > s.len() && w.ends_with(s))
            .unwrap_or(w);
        match w {
            b"password" | b"passwd" | b"secret" => true,
            b"token" => !(0..words.count).any(|o| is_one_of(words.word(o), TOKEN_CONTEXTS)),
            b"pass" => k == last,
            // `api_key`, `STRIPE_KEY`; not `sort_key`, `self.key`, `KEY_F1`.
            b"key" | b"keys" => {
                k > 0 && {
                    let m = words.word(k - 1);
                    is_one_of(m, CREDENTIAL_KEYS) || (env_style && !is_one_of(m, ORDINARY_KEYS))
                }
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Fake credentials in the providers' shapes, assembled at run time so that
    // this file does not itself look like it holds any.

    fn aws() -> String {
        format!("AKIA{}", "Q7ZL4MXW2PBN6RTY")
    }
    fn aws_secret() -> String {
        format!("wJal{}", "rXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    }
    fn github() -> String {
        format!("ghp_{}", "x9Kq2Lm4Np6Rs8Tv0Wy3Za5Bc7De1Fg2Hj4K")
    }
    fn github_pat() -> String {
        format!(
            "github_pat_{}_{}",
            "11ABCDEFG0abcdefghij12", "Zq8xW3vT6uR1yP4oN7mL0kJ2hG5fD9sAbC3eF6gH8jK1lM4nP7qR0sT2uVw"
        )
    }
    fn gitlab() -> String {
        format!("glpat-{}", "Xq3vT8nR2mK7pL9wZ4bY")
    }
    fn slack() -> String {
        format!("xoxb-{}", "1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx")
    }
    fn stripe() -> String {
        format!("sk_live_{}", "51HxQ2eK3vL7mN9pR4tW8yZ1cF5gJ0")
    }
    fn google() -> String {
        format!("AIza{}", "SyD4x9Kq2Lm4Np6Rs8Tv0Wy3Za5Bc7De1Fg")
    }
    fn openai() -> String {
        format!("sk-proj-{}", "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2")
    }
    fn openai_legacy() -> String {
        format!("sk-{}", "Zq8xW3vT6uR1yP4oN7mL0kJ2hG5fD9sAbC3eF6gH8jK1lM4n")
    }
    fn anthropic() -> String {
        format!(
            "sk-ant-api03-{}",
            "Zq8xW3vT6uR1yP4oN7mL0kJ2hG5fD9sA-bC3eF6gH8jK1lM4nP7qR0sT2u"
        )
    }
    fn npm() -> String {
        format!("npm_{}", "x9Kq2Lm4Np6Rs8Tv0Wy3Za5Bc7De1Fg2Hj4K")
    }
    fn pypi() -> String {
        format!(
            "pypi-AgEIcHlwaS5vcmc{}",
            "CJDk2ZWQ4YTNhLTk3ZDUtNDhhZi1hYzE5LTVmNjQ3MjAxZjg5NwACKlsz"
        )
    }
    fn huggingface() -> String {
        format!("hf_{}", "QxWvTuRsPoNmLkJiHgFeDcBaZyXwVuTsRq")
    }
    fn sendgrid() -> String {
        format!(
            "SG.{}.{}",
            "Xq3vT8nR2mK7pL9wZ4bY1c", "Zq8xW3vT6uR1yP4oN7mL0kJ2hG5fD9sAbC3eF6gH8jK"
        )
    }
    fn twilio() -> String {
        format!("SK{}", "0123456789abcdef0123456789abcdef")
    }
    fn jwt() -> String {
        format!(
            "eyJ{}.eyJ{}.{}",
            "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
            "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ",
            "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
        )
    }
    fn pem_body() -> String {
        "MIIEowIBAAKCAQEAx9Kq2Lm4Np6Rs8Tv0Wy3Za5Bc7De1Fg2Hj4K\nZq8xW3vT6uR1yP4oN7mL0kJ2hG5fD9sA+bC3eF6gH8jK1lM4n==\n".repeat(3)
    }
    fn pem(label: &str) -> String {
        format!(
            "-----BEGIN {label}-----\n{}-----END {label}-----",
            pem_body()
        )
    }
    fn random20() -> String {
        format!("9fK2{}", "mQ7xLp4RtZ8wVn3B")
    }

    fn r(s: &str) -> String {
        redact_text(s).into_owned()
    }

    #[test]
    fn provider_tokens_are_redacted_by_kind() {
        let cases: Vec<(String, &str)> = vec![
            (aws(), "aws-access-key"),
            (format!("ASIA{}", "Q7ZL4MXW2PBN6RTY"), "aws-access-key"),
            (github(), "github-token"),
            (
                format!("gho_{}", "x9Kq2Lm4Np6Rs8Tv0Wy3Za5Bc7De1Fg2Hj4K"),
                "github-token",
            ),
            (
                format!("ghs_{}", "x9Kq2Lm4Np6Rs8Tv0Wy3Za5Bc7De1Fg2Hj4K"),
                "github-token",
            ),
            (github_pat(), "github-token"),
            (gitlab(), "gitlab-token"),
            (format!("glrt-{}", "Xq3vT8nR2mK7pL9wZ4bY"), "gitlab-token"),
            (slack(), "slack-token"),
            (
                format!(
                    "xoxp-{}",
                    "1234567890-0987654321-1122334455-abcdef0123456789"
                ),
                "slack-token",
            ),
            (stripe(), "stripe-key"),
            (
                format!("rk_live_{}", "51HxQ2eK3vL7mN9pR4tW8yZ1cF5gJ0"),
                "stripe-key",
            ),
            (
                format!("sk_test_{}", "4eC39HqLyjWDarjtT1zdp7dc"),
                "stripe-key",
            ),
            (google(), "google-api-key"),
            (openai(), "openai-key"),
            (openai_legacy(), "openai-key"),
            (anthropic(), "anthropic-key"),
            (npm(), "npm-token"),
            (pypi(), "pypi-token"),
            (huggingface(), "huggingface-token"),
            (sendgrid(), "sendgrid-key"),
            (twilio(), "twilio-key"),
            (jwt(), "jwt"),
            (
                format!("shpat_{}", "0123456789abcdef0123456789abcdef"),
                "shopify-token",
            ),
            (
                format!("dop_v1_{}", "0123456789abcdef".repeat(4)),
                "digitalocean-token",
            ),
        ];
        for (secret, kind) in cases {
            let marker = format!("[REDACTED:{kind}]");
            for (before, after) in [
                ("", ""),
                ("use ", " now"),
                ("(", ")"),
                ("\"", "\","),
                ("'", "'"),
                ("é ", " 日本"),
                ("🦀", "🦀"),
                ("line\n", "\nnext"),
                ("escaped\\n", "\\n"),
                ("x:", "."),
            ] {
                let input = format!("{before}{secret}{after}");
                assert_eq!(r(&input), format!("{before}{marker}{after}"), "{input}");
            }
        }
    }

    #[test]
    fn the_end_to_end_prompt_keeps_its_words() {
        assert_eq!(
            r(&format!("deploy with key {} thanks", aws())),
            "deploy with key [REDACTED:aws-access-key] thanks"
        );
    }

    #[test]
    fn structured_secrets_are_redacted() {
        let cases: Vec<(String, String)> = vec![
            // URL credentials: only the password goes.
            (
                "postgres://admin:hunter2pw@db:5432/app".into(),
                "postgres://admin:[REDACTED:url-credentials]@db:5432/app".into(),
            ),
            ("redis://:s3cr3t@cache".into(), "redis://:[REDACTED:url-credentials]@cache".into()),
            (
                "git remote: https://deploy:p@ss:w0rd@git.example.com/app.git".into(),
                "git remote: https://deploy:[REDACTED:url-credentials]@git.example.com/app.git".into(),
            ),
            (
                "DATABASE_URL=\"mysql://root:rootpw@localhost/db\"".into(),
                "DATABASE_URL=\"mysql://root:[REDACTED:url-credentials]@localhost/db\"".into(),
            ),
            // Authorization headers keep their scheme.
            (
                format!("curl -H 'Authorization: Bearer {}' https://api.example.com", openai()),
                "curl -H 'Authorization: Bearer [REDACTED:openai-key]' https://api.example.com".into(),
            ),
            (
                "Authorization: Bearer abc123.def456-ghi789_jkl".into(),
                "Authorization: Bearer [REDACTED:bearer-token]".into(),
            ),
            (
                "Authorization: Basic dXNlcjpwYXNzd29yZA==".into(),
                "Authorization: Basic [REDACTED:bearer-token]".into(),
            ),
            (
                "{\"Authorization\": \"Bearer abc123def456ghi789\"}".into(),
                "{\"Authorization\": \"Bearer [REDACTED:bearer-token]\"}".into(),
            ),
            (
                "headers: {authorization: `token abc123def456ghi789`}".into(),
                "headers: {authorization: `token [REDACTED:bearer-token]`}".into(),
            ),
            (
                "got bearer Zm9vYmFyYmF6cXV4MTIz in the log".into(),
                "got bearer [REDACTED:bearer-token] in the log".into(),
            ),
            // Slack webhooks keep the host.
            (
                format!("post to https://hooks.slack.com/services/T{}/B{}/{}", "01ABCDE2F", "0GHIJK3LM", "Xq3vT8nR2mK7pL9wZ4bY1c2d"),
                "post to https://hooks.slack.com/services/[REDACTED:slack-webhook]".into(),
            ),
            // AWS secret access key in its usual places.
            (
                format!("AWS_SECRET_ACCESS_KEY={}", aws_secret()),
                "AWS_SECRET_ACCESS_KEY=[REDACTED:secret-assignment]".into(),
            ),
            (
                format!("[default]\naws_access_key_id = {}\naws_secret_access_key = {}\n", aws(), aws_secret()),
                "[default]\naws_access_key_id = [REDACTED:aws-access-key]\naws_secret_access_key = [REDACTED:secret-assignment]\n".into(),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(r(&input), expected, "{input}");
        }
    }

    #[test]
    fn assignments_under_secret_keys_are_redacted() {
        let cases: &[(&str, &str)] = &[
            (
                "DB_PASSWORD=correct-horse-battery-staple-42",
                "DB_PASSWORD=[REDACTED:secret-assignment]",
            ),
            (
                "export API_TOKEN=abc123xyz",
                "export API_TOKEN=[REDACTED:secret-assignment]",
            ),
            (
                "export DB_PASS='two words'",
                "export DB_PASS='[REDACTED:secret-assignment]'",
            ),
            (
                "POSTGRES_PASSWORD: postgres",
                "POSTGRES_PASSWORD: [REDACTED:secret-assignment]",
            ),
            (
                "password: hunter2",
                "password: [REDACTED:secret-assignment]",
            ),
            ("password: mypass", "password: [REDACTED:secret-assignment]"),
            (
                "{\"password\": \"hunter2\", \"user\": \"bob\"}",
                "{\"password\": \"[REDACTED:secret-assignment]\", \"user\": \"bob\"}",
            ),
            (
                "{\"api_key\":\"abcd1234efgh\"}",
                "{\"api_key\":\"[REDACTED:secret-assignment]\"}",
            ),
            (
                "{'client_secret': 'abcd1234efgh'}",
                "{'client_secret': '[REDACTED:secret-assignment]'}",
            ),
            (
                "{\\\"password\\\": \\\"hunter2\\\"}",
                "{\\\"password\\\": \\\"[REDACTED:secret-assignment]\\\"}",
            ),
            (
                "connect(user='bob', password='hunter2')",
                "connect(user='bob', password='[REDACTED:secret-assignment]')",
            ),
            (
                "spring.datasource.password=Secr3t!",
                "spring.datasource.password=[REDACTED:secret-assignment]",
            ),
            (
                "X-Api-Key: 0123abcd4567",
                "X-Api-Key: [REDACTED:secret-assignment]",
            ),
            (
                "STRIPE_KEY = \"rk_abc123def456\"",
                "STRIPE_KEY = \"[REDACTED:secret-assignment]\"",
            ),
            (
                "const apiKey = \"abc123def456\";",
                "const apiKey = \"[REDACTED:secret-assignment]\";",
            ),
            (
                "apiKey := \"abc123def456\"",
                "apiKey := \"[REDACTED:secret-assignment]\"",
            ),
            (
                "const DB_PASSWORD: &str = \"hunter22\";",
                "const DB_PASSWORD: &str = \"[REDACTED:secret-assignment]\";",
            ),
            (
                "password: str = \"hunter22\"",
                "password: str = \"[REDACTED:secret-assignment]\"",
            ),
            (
                "'password' => 'hunter22',",
                "'password' => '[REDACTED:secret-assignment]',",
            ),
            (
                "os.environ[\"API_KEY\"] = \"abc123def456\"",
                "os.environ[\"API_KEY\"] = \"[REDACTED:secret-assignment]\"",
            ),
            (
                "GET /x?access_token=abc123def456&page=2",
                "GET /x?access_token=[REDACTED:secret-assignment]&page=2",
            ),
            (
                "mysql --password hunter22 db",
                "mysql --password [REDACTED:secret-assignment] db",
            ),
            (
                "tool --api-key \"abc 123\"",
                "tool --api-key \"[REDACTED:secret-assignment]\"",
            ),
            (
                "gh auth --token=abc123def456",
                "gh auth --token=[REDACTED:secret-assignment]",
            ),
            (
                "curl -u admin:hunter22 https://x",
                "curl -u admin:[REDACTED:secret-assignment] https://x",
            ),
            (
                "curl --user admin:hunter22 https://x",
                "curl --user admin:[REDACTED:secret-assignment] https://x",
            ),
            (
                "PASSWORD=pässwörd123 next",
                "PASSWORD=[REDACTED:secret-assignment] next",
            ),
            (
                "Set-Cookie: session=abc123def456",
                "Set-Cookie: session=[REDACTED:secret-assignment]",
            ),
            (
                "SECRET_KEY_BASE=9a8b7c6d",
                "SECRET_KEY_BASE=[REDACTED:secret-assignment]",
            ),
            (
                "PGPASSWORD=postgres psql -h db",
                "PGPASSWORD=[REDACTED:secret-assignment] psql -h db",
            ),
            (
                "database:\n  password: postgres\n",
                "database:\n  password: [REDACTED:secret-assignment]\n",
            ),
            (
                "token: Xq3vT8nR2mK7\n",
                "token: [REDACTED:secret-assignment]\n",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(r(input), *expected, "{input}");
        }
    }

    #[test]
    fn provider_kind_wins_inside_assignments() {
        let cases: Vec<(String, String)> = vec![
            (
                format!("GITHUB_TOKEN = \"{}\"", github()),
                "GITHUB_TOKEN = \"[REDACTED:github-token]\"".into(),
            ),
            (
                format!("ANTHROPIC_API_KEY={}", anthropic()),
                "ANTHROPIC_API_KEY=[REDACTED:anthropic-key]".into(),
            ),
            (
                format!("STRIPE_KEY={}\nSLACK={}", stripe(), slack()),
                "STRIPE_KEY=[REDACTED:stripe-key]\nSLACK=[REDACTED:slack-token]".into(),
            ),
            (
                format!("AWS_ACCESS_KEY_ID={}", aws()),
                "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]".into(),
            ),
            (
                format!("\"token\": \"{}\"", jwt()),
                "\"token\": \"[REDACTED:jwt]\"".into(),
            ),
            (
                format!("NOTE=\"{} and more\"", github()),
                "NOTE=\"[REDACTED:github-token] and more\"".into(),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(r(&input), expected, "{input}");
        }
    }

    #[test]
    fn high_entropy_values_under_any_key() {
        let cases: Vec<(String, String)> = vec![
            (
                format!("FOO={}", random20()),
                "FOO=[REDACTED:high-entropy]".into(),
            ),
            (
                format!("client: \"{}\"", random20()),
                "client: \"[REDACTED:high-entropy]\"".into(),
            ),
            (
                format!("X = '{}{}'", random20(), random20()),
                "X = '[REDACTED:high-entropy]'".into(),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(r(&input), expected, "{input}");
        }
    }

    #[test]
    fn private_key_blocks_are_redacted_whole() {
        for label in [
            "RSA PRIVATE KEY",
            "PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "EC PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "PGP PRIVATE KEY BLOCK",
        ] {
            let block = pem(label);
            assert_eq!(
                r(&format!("key:\n{block}\ndone")),
                "key:\n[REDACTED:private-key]\ndone"
            );
            // JSON-escaped newlines, and a diff.
            let escaped = block.replace('\n', "\\n");
            assert_eq!(
                r(&format!("{{\"k\": \"{escaped}\\n\"}}")),
                "{\"k\": \"[REDACTED:private-key]\\n\"}"
            );
            let diff: String = block.lines().map(|l| format!("+{l}\n")).collect();
            assert_eq!(r(&diff), "+[REDACTED:private-key]\n");
            // Under a secret key, the whole block goes too.
            assert_eq!(
                r(&format!("PRIVATE_KEY=\"{block}\"")),
                "PRIVATE_KEY=\"[REDACTED:private-key]\""
            );
        }
        // A token glued to the end of a block is still a token.
        assert_eq!(
            r(&format!("{}{}", pem("RSA PRIVATE KEY"), github())),
            "[REDACTED:private-key][REDACTED:github-token]"
        );
        // Unterminated: to the end of the text.
        let cut = format!("before\n-----BEGIN RSA PRIVATE KEY-----\n{}", pem_body());
        assert_eq!(r(&cut), "before\n[REDACTED:private-key]");
        // Followed by a certificate: the certificate stays.
        let chain = format!(
            "{}\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            pem("PRIVATE KEY")
        );
        assert_eq!(
            r(&chain),
            "[REDACTED:private-key]\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
        );
    }

    #[test]
    fn ordinary_text_and_code_survive() {
        let uuid = "123e4567-e89b-12d3-a456-426614174000";
        let sha = "e83c5163316f89bfbde7d9ab23ca2e25604af290";
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
        let long_base64 = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODkrLw".repeat(4);
        let cases: Vec<String> = vec![
            // Hashes, ids, colours, paths.
            format!("commit {sha}"),
            format!("sha = \"{sha}\""),
            format!("checksum = \"{}\"", sha.repeat(2)[..64].to_owned()),
            format!("id: {uuid}"),
            format!("REQUEST_ID={}", uuid.to_uppercase()),
            "\"integrity\": \"sha512-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC==\"".into(),
            "color: #ff00aa; background: #AABBCC;".into(),
            "/usr/local/bin/sk-tool --help".into(),
            "PWD=/home/user/project".into(),
            "SECRET_FILE=/run/secrets/db_password".into(),
            "GOOGLE_APPLICATION_CREDENTIALS=./keys/sa.json".into(),
            format!("<img src=\"data:image/png;base64,{png}\">"),
            format!("const PIXELS = [\"{png}\", \"{long_base64}\"];"),
            format!("data = \"{long_base64}\""),
            // Prefixes inside words.
            "a task-list of risk-free, disk-based sk-learn jobs; ask-me".into(),
            format!("MY{}", aws()),
            format!("{}X", aws()),
            format!("x_{}", github()),
            format!("{}Z", google()),
            "see hf_hub_download and npm_config_cache and gh_pages".into(),
            "skeleton sk-abc123 xoxb-short".into(),
            format!("eyJhbGciOiJIUzI1NiJ9 alone, {} not sendgrid", "SG.short.x"),
            // Code that mentions secrets without holding any.
            "let token = Token::new(kind);".into(),
            "password: String,".into(),
            "self.password = password;".into(),
            "token: Option<String>,".into(),
            "api_key: &str,".into(),
            "token_count = 42".into(),
            "\"max_tokens\": 1024, \"input_tokens\": 12345, \"output_tokens\": 99".into(),
            "if token == expected { return; }".into(),
            "if password != confirm {".into(),
            "api_key = os.environ[\"API_KEY\"]".into(),
            "const API_KEY = process.env.API_KEY;".into(),
            "password = getpass()".into(),
            "secret = config.secret".into(),
            "token = await getToken()".into(),
            "SECRET_KEY = get_random_secret_key()".into(),
            "let secret = secrets::redact_text(text);".into(),
            "format!(\"token={token}\")".into(),
            "f\"password={password}\"".into(),
            "def login(username: str, password: str) -> Token:".into(),
            "interface Creds { password: string; token: Token }".into(),
            "nextPageToken: \"CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0\"".into(),
            "\"session_id\": \"abc123def456ghi\"".into(),
            "cookie_name = \"sessionid\"".into(),
            "primary_key = \"id\"; sort_key = \"created\"".into(),
            "keyboard: qwerty, monkey: island".into(),
            // References and placeholders.
            "secret: ${{ secrets.GITHUB_TOKEN }}".into(),
            "DB_PASSWORD=${DB_PASSWORD}".into(),
            "TOKEN=$TOKEN".into(),
            "export API_KEY=$(cat ~/.key)".into(),
            "password: <your-password>".into(),
            "API_KEY=YOUR_API_KEY_HERE".into(),
            "PASSWORD=changeme".into(),
            "password=\"\"".into(),
            "token: null".into(),
            "auth: true".into(),
            "pass: 3".into(),
            "password: ********".into(),
            "PIN=123456".into(),
            "-H \"Authorization: Bearer $TOKEN\"".into(),
            "Authorization: Bearer <token>".into(),
            "use a bearer token for authentication".into(),
            "Token: expired".into(),
            "docker login --password-stdin registry.example.com".into(),
            // URLs without passwords.
            "ssh://git@github.com/org/repo.git".into(),
            "https://user@host/path and http://localhost:8080/x?a=b".into(),
            "git@github.com:org/repo.git".into(),
            "https://example.com/@user:name".into(),
            "postgres://user:${DB_PASS}@db/app".into(),
            // Identifiers and words, however long.
            "const fooBarBaz = someFunctionName2024();".into(),
            "let value = camelCaseIdentifierName2024;".into(),
            "HelloWorldFooBar1234 = 1".into(),
            "KeyboardEvent".into(),
            // Found in real code (cargo registry, Python's stdlib, npm).
            "pub const VK_RETURN: VIRTUAL_KEY = 13u16;".into(),
            "pub const WKS_FLAG_PASSWORD_ENCRYPTED: u32 = 2u32;".into(),
            "pub const SL_E_TOKEN: HRESULT = 0x8009_8031_u32 as _;".into(),
            "const SECRET_VALUE_WINDOW: usize = 4096;".into(),
            "const PRIVATE_KEY: &str = \"private-key\";".into(),
            "const JSON_ERROR_KEY = 'jsonError'".into(),
            "ExtendedKeyUsageOID.CLIENT_AUTH: \"clientAuth\",".into(),
            "pwd: *mut passwd, pToken: *const c_char,".into(),
            "pub log_passwd: __u32,".into(),
            "<Input as Stream>::Token: AsChar + Clone,".into(),
            "type Token = S::Token;".into(),
            "token = Name.Builtin.Pseudo".into(),
            "self, private_key: ed25519.Ed25519PrivateKey, f_priv: _FragList".into(),
            "self.key = '_threading_local._localimpl.' + str(id(self))".into(),
            "self.token = nextchar".into(),
            "sys_key = 'include'".into(),
            "_curses.KEY_F34: 'kf34',".into(),
            "tokenData.cidr_whitelist = validCIDR".into(),
            ":param token: REQUIRED.  The token that the client wants revoked.".into(),
            "// `api_key_2`: trailing numbers are not the head word.".into(),
            "permissions:\n  id-token: write\n  contents: read".into(),
            "\"progressToken\": \"progress-1\"".into(),
            "Token.Number: \"#976806\", TOKEN_ENDS = TSPECIALS | WSP".into(),
            "source token: \"github_webhook\" | \"trigger_fire\"".into(),
            "challenge(r#\"Bearer resource_metadata=\"/metadata\", scope=\"read\"\"#)".into(),
            "HeaderValue::from_static(\"Bearer token123\")".into(),
            "\"http://a:b@c:29/d\", \"redis://foo:bar@somehost:6379/0\"".into(),
            "err(\"expected '-----BEGIN PRIVATE KEY-----' at the start\")\nmore code".into(),
            "#[cfg(feature = \"Win32_Data_Xml_MsXml\")]".into(),
            "let m = 0x3456789ABCDEF000u64;".into(),
            "run: CARGO_TARGET_WASM32_UNKNOWN_EMSCRIPTEN_RUNNER=node cargo test".into(),
            // Public material.
            format!("-----BEGIN PUBLIC KEY-----\n{}-----END PUBLIC KEY-----", pem_body()),
            format!("-----BEGIN CERTIFICATE-----\n{}-----END CERTIFICATE-----", pem_body()),
            // Text and markers.
            "Привет, мир! 日本語のテキスト — ok ✓ 🦀".into(),
            "already [REDACTED:aws-access-key] and x=[REDACTED:high-entropy]".into(),
            "".into(),
        ];
        for input in cases {
            let out = redact_text(&input);
            assert!(
                matches!(out, Cow::Borrowed(_)),
                "changed: {input}\n   into: {out}"
            );
        }
    }

    #[test]
    fn key_names() {
        let secret = "
            password PASSWORD db_password DB_PASS passwd pwd passphrase secret client_secret
            clientSecret SESSION_SECRET COOKIE_SECRET token GITHUB_TOKEN access_token
            accessToken refresh_token id_token X-Auth-Token api_key apikey APIKEY apiKey APIKey
            x-api-key access_key AWS_SECRET_ACCESS_KEY secretAccessKey private_key privateKey
            STRIPE_KEY SENDGRID_KEY encryption_key signing_key session_key auth AUTH basic_auth
            authorization Proxy-Authorization credential credentials creds cookie Set-Cookie
            session_token csrf_token SECRET_KEY_BASE api_key_2 api_key_v2
            spring.datasource.password --password password_confirmation
            ExtendedKeyUsageOID.CLIENT_AUTH id-token PGPASSWORD MYSQL_ROOT_PASSWORD
            DB_PASSWORD_2
        ";
        for k in secret.split_whitespace() {
            assert!(key_names_secret(k), "{k} should name a secret");
        }
        // (`mongo_key`: a lower-case `*_key` names a credential only with a
        // credential word before it; `MONGO_KEY` in env style would.)
        let not_secret = "
            key KEY keys token_count tokenCount max_tokens input_tokens output_tokens
            cache_creation_input_tokens total_tokens next_page_token nextPageToken token_type
            tokenizer keyboard monkey hotkey primary_key sort_key partition_key cache_key
            foreign_key public_key publicKey key_id access_key_id AWS_ACCESS_KEY_ID
            private_key_id private_key_path password_hint password_length min_password_length
            auth_url auth_type authMethod author oauth_callback secret_name secretName
            credential_helper CREDENTIALS_FILE session_id sessionId cookie_name bypass passenger
            compass description name file_path tool_use_id content command old_string pass_rate
            password-stdin sys_key self.key KEY_F1 _curses.KEY_F34 tokenData.cidr_whitelist
            progressToken meta_form_key_1 mongo_key dotted-key TOKEN_ENDS token_start
            VIRTUAL_KEY_MAX
        ";
        assert!(!key_names_secret(""));
        for k in not_secret.split_whitespace() {
            assert!(!key_names_secret(k), "{k} should not name a secret");
        }
    }

    #[test]
    fn redaction_is_idempotent_and_borrowed_when_clean() {
        let samples = [
            format!("deploy with key {} thanks", aws()),
            format!(
                "DB_PASSWORD=hunter22\nTOKEN={}\nFOO={}",
                github(),
                random20()
            ),
            format!("postgres://admin:pw@db and {}", pem("RSA PRIVATE KEY")),
            format!("Authorization: Bearer {}", jwt()),
            format!("{{\"password\": \"x y z\", \"api_key\": \"{}\"}}", openai()),
        ];
        for s in &samples {
            let once = r(s);
            assert_ne!(&once, s);
            let twice = redact_text(&once);
            assert!(matches!(twice, Cow::Borrowed(_)), "{once} -> {twice}");
        }
    }

    use crate::privacy::test_rng::Rng;

    #[test]
    fn fuzz_secrets_never_survive_and_nothing_panics() {
        let secrets = [
            aws(),
            github(),
            github_pat(),
            gitlab(),
            slack(),
            stripe(),
            google(),
            openai(),
            openai_legacy(),
            anthropic(),
            npm(),
            pypi(),
            huggingface(),
            sendgrid(),
            twilio(),
            jwt(),
            pem("RSA PRIVATE KEY"),
        ];
        // What secrets may be glued to: anything that does not continue a word.
        let seps = [
            " ", "\n", "\t", ", ", "(", ")", "\"", "'", "é", "日", "🦀", ": ", "=", "\u{a0}",
            "\\n", "`", "/",
        ];
        let noise: Vec<char> = (0x20u8..0x7f)
            .map(char::from)
            .chain("\n\t éß日本🦀—жø\u{a0}".chars())
            .collect();
        let pieces = [
            "KEY=",
            "password: ",
            "\"token\": \"",
            "--password ",
            "Bearer ",
            "https://u:",
            "@h/",
            "-----BEGIN ",
            "[REDACTED:",
            "eyJ",
            "sk-",
            "AKIA",
            "=",
            ":",
            "\\\"",
            "${",
            "://",
            "@",
            "-u ",
            "--user ",
            "Authorization: ",
            "export X=",
            "\"",
            "]",
            "[",
            "x://a:b@",
            "-----END RSA PRIVATE KEY-----",
            "hooks.slack.com/services/",
            "Basic ",
            "\\n",
            "'",
            "{",
            "}",
            " ",
            ": ",
            "_KEY=",
            "--token ",
        ];
        let seed: u64 = std::env::var("FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        let mut rng = Rng(seed);
        for round in 0..std::env::var("FUZZ_ROUNDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3000)
        {
            let mut text = String::new();
            let mut planted = Vec::new();
            for _ in 0..rng.below(12) {
                match rng.below(4) {
                    0 => {
                        let secret = secrets[rng.below(secrets.len())].clone();
                        text.push_str(rng.pick(&seps));
                        text.push_str(&secret);
                        text.push_str(rng.pick(&seps));
                        planted.push(secret);
                    }
                    1 => text.push_str(rng.pick(&pieces)),
                    _ => {
                        for _ in 0..rng.below(20) {
                            text.push(rng.pick(&noise));
                        }
                    }
                }
            }
            let once = redact_text(&text).into_owned();
            for secret in &planted {
                // A PEM body is cut whole; for tokens the full string must go.
                let needle = if secret.starts_with("-----") {
                    &secret[40..80]
                } else {
                    secret.as_str()
                };
                assert!(
                    !once.contains(needle),
                    "round {round}: {needle:?} survived in {once:?} (from {text:?})"
                );
            }
            let twice = redact_text(&once);
            assert_eq!(twice, once, "round {round}: not idempotent for {text:?}");
        }
    }

    /// Inputs on which the fuzz loop once found a leak or a second pass that
    /// changed the text.
    #[test]
    fn fuzz_regressions() {
        let cases = [
            format!(
                "q=\"- \tAuthorization: 't&;1t }}<Q_\"rd )SG.{}.{}(_D\t'6",
                "Xq3vT8nR2mK7pL9wZ4bY1c", "Zq8xW3vT6uR1yP4oN7mL0kJ2hG5fD9sAbC3eF6gH8jK"
            ),
            format!(
                "_KEY='__5e\"token\": \"={}\u{a0}Q|T\\n{}(w'Bp\\n{}=R\"en",
                aws(),
                openai_legacy(),
                aws()
            ),
            format!(
                "\"token\": \"-----END RSA PRIVATE KEY-----password: '{}/ {}\"|zV 'é",
                npm(),
                github()
            ),
            format!("eyJ--token : {}: _U1_KEY=AKIAx2_R~B", google()),
            format!("password: _6QXG'{}=\u{a0}Rp", stripe()),
            format!("Authorization: Si1XNaxKbcSu {}=mE<U", github()),
            format!("Bearer hooks.slack.com/services/={}: ", openai()),
            format!("x password: 6\t{}=RPP^xnD/MY6uhv]\"v", jwt()),
            format!("--user https://u:={}\n", github()),
            format!("-u {}/P%a:*-@$_ 1EsG){}'", aws(), npm()),
            format!(
                "\tSK{}: sk-KEY=ShO*\"bKa",
                "0123456789abcdef0123456789abcdef"
            ),
            format!("=[REDACTED:--password  {} ^]T;<https://u:", aws()),
            format!(
                "\"token\": \"日{}/://eyJ-\u{a0}i&\"){}",
                pem("RSA PRIVATE KEY"),
                github_pat()
            ),
        ];
        let secrets = [
            aws(),
            github(),
            google(),
            stripe(),
            openai(),
            openai_legacy(),
            npm(),
            jwt(),
            github_pat(),
        ];
        for text in &cases {
            let once = r(text);
            for secret in &secrets {
                assert!(
                    !once.contains(secret.as_str()),
                    "{secret} survived in {once}"
                );
            }
            assert!(!once.contains("Zq8xW3vT6uR1yP4oN7mL0kJ2hG5fD9sA"), "{once}");
            assert_eq!(r(&once), once, "not idempotent for {text:?}");
        }
    }

    #[test]
    fn adversarial_inputs_stay_linear() {
        // Quadratic behaviour would take minutes on these; linear takes
        // milliseconds.
        let n = 200_000;
        let inputs = [
            "sk-".repeat(n / 3),
            "a=".repeat(n / 2),
            "token=".repeat(n / 6),
            "password: \"".repeat(n / 11),
            "://".repeat(n / 3),
            "x://u:".repeat(n / 6),
            "eyJabcdefghijkl.".repeat(n / 16),
            "-----BEGIN RSA PRIVATE KEY-----".repeat(n / 31),
            "-----END RSA PRIVATE KEY-----".repeat(n / 29),
            "--password --password ".repeat(n / 22),
            "Bearer ".repeat(n / 7),
            "[REDACTED:".repeat(n / 10),
            "A".repeat(n),
            "x".repeat(n),
        ];
        let started = std::time::Instant::now();
        for input in &inputs {
            let _ = redact_text(input);
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }

    /// `cargo test --release -p mnemo-core -- --ignored --nocapture timing`
    #[test]
    #[ignore]
    fn timing_on_64_kib_of_source() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut corpus = String::new();
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() && !path.ends_with("tests") && !path.ends_with("target") {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && !path.ends_with("secrets.rs")
                {
                    corpus.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
                }
            }
        }
        let mut cut = 64 * 1024;
        while !corpus.is_char_boundary(cut) {
            cut -= 1;
        }
        // The workspace has a few test fixtures (`"password": "hunter2"`):
        // time the text once they are redacted, i.e. source with no secret.
        let clean = redact_text(&corpus[..cut]).into_owned();
        assert!(matches!(redact_text(&clean), Cow::Borrowed(_)));
        let rounds = 500;
        let started = std::time::Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(redact_text(std::hint::black_box(&clean)));
        }
        println!(
            "redact_text on {} bytes of source without secrets: {:?} per call",
            clean.len(),
            started.elapsed() / rounds
        );
    }
}

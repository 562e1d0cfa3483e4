//! Texts of exactly N bytes (`--output-bytes`): a command's output and a
//! file state's diff.

use crate::gen::Rng;
use saltscope_core::time::iso_utc;

/// ASCII text of exactly `n` bytes: `head`, then `chunk(0)`, `chunk(1)`, … while
/// they fit, then padding at the end of the last line (before its newline, when
/// the text ends in one), so that every line stays whole.
fn exact_text(n: usize, head: &str, mut chunk: impl FnMut(usize) -> String, pad: &str) -> String {
    let mut out = String::with_capacity(n);
    out.push_str(&head[..head.len().min(n)]);
    for k in 0.. {
        let c = chunk(k);
        if c.is_empty() || out.len() + c.len() > n {
            break;
        }
        out.push_str(&c);
    }
    let fill: String = pad
        .bytes()
        .cycle()
        .take(n - out.len())
        .map(char::from)
        .collect();
    if out.ends_with('\n') && !fill.is_empty() {
        out.insert_str(out.len() - 1, &fill);
    } else {
        out.push_str(&fill);
    }
    out
}

/// The comment of a `pkg.installed` that failed in a package's
/// post-installation script: Salt's words, then all apt and dpkg printed,
/// exactly `n` bytes.
pub fn dpkg_failure(n: usize, package: &str, version: &str) -> String {
    let head = format!(
        "An error was encountered while installing package(s): Error occurred installing package(s). Additional info follows:\n\nerrors:\n    - Setting up {package} ({version}) ...\n"
    );
    let tail = format!(
        "dpkg: error processing package {package} (--configure):\n installed {package} package post-installation script subprocess returned error exit status 1\nErrors were encountered while processing:\n {package}\nE: Sub-process /usr/bin/dpkg returned an error code (1)"
    );
    let body = n.saturating_sub(tail.len());
    let mut text = exact_text(
        body,
        &head,
        |k| {
            format!("      {package}.postinst: rebuilding index {k:06}: /var/lib/{package}/index/{k:06}.idx (4096 entries) ok\n")
        },
        " ",
    );
    text.push_str(&tail);
    text
}

/// What `journalctl -u app.service --no-pager -o short-iso-precise --since -24h`
/// prints on `minion` before `start_us`: exactly `n` bytes, no final newline
/// (cmd.run strips it).
pub fn command_output(n: usize, minion: &str, start_us: i64, seed: u64) -> String {
    let host = minion.split('.').next().unwrap_or(minion).to_string();
    let mut r = Rng::new(seed);
    let mut t = start_us - 86_400_000_000;
    let per_line = 86_400_000_000 / (n as i64 / 120).max(1);
    let paths = [
        "/api/v1/jobs",
        "/api/v1/minions",
        "/healthz",
        "/api/v1/jobs/export",
        "/static/app.js",
    ];
    exact_text(
        n,
        "",
        |k| {
            t += (per_line as f64 * r.range(0.2, 1.8)) as i64;
            let pid = 4000 + (k / 5000) as u64;
            let line = match r.below(20) {
                0 => format!(
                    "{} {host} app[{pid}]: WARNING slow query on jobs ({} ms): SELECT jid, fun FROM jobs WHERE minion = $1 ORDER BY jid DESC LIMIT 50",
                    iso_utc(t),
                    200 + r.below(5000)
                ),
                1 => format!(
                    "{} {host} app[{pid}]: ERROR upstream 10.0.{}.{}:8080 timed out after 30000 ms (attempt {} of 3)",
                    iso_utc(t),
                    r.below(8),
                    2 + r.below(250),
                    1 + r.below(3)
                ),
                _ => format!(
                    "{} {host} app[{pid}]: INFO {} {} {} {} ms req={:016x}",
                    iso_utc(t),
                    if r.chance(0.8) { "GET" } else { "POST" },
                    paths[r.below(paths.len())],
                    [200, 200, 200, 304, 404][r.below(5)],
                    1 + r.below(400),
                    r.next_u64()
                ),
            };
            if k == 0 {
                line
            } else {
                format!("\n{line}")
            }
        },
        " (message truncated)",
    )
}

/// A unified diff of exactly `n` bytes (as `file.managed` reports one: `--- \n+++ \n@@ …`)
/// of a long config file, one changed line per hunk.
pub fn long_diff(n: usize, minion: &str, seed: u64) -> String {
    let mut r = Rng::new(seed);
    let mut line = 1usize;
    let server = |l: usize, w: usize| {
        format!(
            "server 10.{}.{}.{}:8080 weight={w} max_fails=3 fail_timeout=30s;  # backend {l}",
            l / 65536 % 256,
            l / 256 % 256,
            l % 256
        )
    };
    exact_text(
        n,
        "--- \n+++ \n",
        |_| {
            let l = line;
            line += 7 + r.below(40);
            let w = 1 + r.below(5);
            let mut h = format!("@@ -{l},7 +{l},7 @@\n");
            for c in 0..3 {
                h.push_str(&format!(" {}\n", server(l + c, 1)));
            }
            h.push_str(&format!("-{}\n", server(l + 3, w)));
            h.push_str(&format!("+{}, {minion}\n", server(l + 3, w + 1)));
            for c in 4..7 {
                h.push_str(&format!(" {}\n", server(l + c, 1)));
            }
            h
        },
        " #",
    )
}

/// What `file.find /srv/www` returns on a web server with many releases: the
/// directories and files under it, sorted, their lengths adding up to at most
/// `n` bytes (and within one path of it).
pub fn found_paths(n: usize, seed: u64) -> Vec<String> {
    let mut r = Rng::new(seed);
    let mut paths = vec![crate::gen::BIG_FIND_ROOT.to_string()];
    let mut used = paths[0].len();
    let kinds = [
        ("js", "static/js/chunk"),
        ("css", "static/css/chunk"),
        ("png", "static/img/icon"),
    ];
    'releases: for release in 0.. {
        let dir = format!(
            "/srv/www/releases/2026.{:02}.{:03}",
            1 + release / 1000 % 12,
            release % 1000
        );
        let mut batch = vec![dir.clone()];
        for (ext, stem) in kinds {
            for k in 0..20 + r.below(30) {
                batch.push(format!(
                    "{dir}/{stem}-{k:03}.{:08x}.{ext}",
                    r.next_u64() as u32
                ));
            }
        }
        for p in batch {
            if used + p.len() > n {
                break 'releases;
            }
            used += p.len();
            paths.push(p);
        }
    }
    paths.sort();
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_texts_have_exactly_the_bytes_asked_for() {
        for n in [1024, 1025, 4096, 77_777, 300_001] {
            let out = command_output(n, "web0001.prod.example.com", 1_800_000_000_000_000, 3);
            assert_eq!(out.len(), n);
            assert!(out.is_ascii() && !out.ends_with('\n') && out.lines().count() > 1);
            let diff = long_diff(n, "web0001.prod.example.com", 3);
            assert_eq!(diff.len(), n);
            assert!(diff.starts_with("--- \n+++ \n@@ -1,7 +1,7 @@\n") && diff.ends_with('\n'));
            let paths = found_paths(n, 3);
            let bytes: usize = paths.iter().map(String::len).sum();
            assert!(bytes <= n && bytes + 80 > n, "{bytes} of {n}");
            assert!(
                paths.windows(2).all(|w| w[0] < w[1]),
                "sorted, no duplicates"
            );
        }
    }
}

//! A state return holding N states (`--states-per-return`), written straight
//! into JSON text, state by state: a 10,000-state tree would take several
//! times the memory of its text, for nothing.

use super::text::dpkg_failure;
use crate::gen::{mix, Rng};
use crate::json::{convert_keys, s, write_str, J};
use crate::obj;
use saltscope_core::time::time_of_day;

/// The SLS files a big run is spread over, in run order (each one a block of states).
pub const BIG_SLS: &[&str] = &[
    "common.packages",
    "common.users",
    "common.ssh",
    "common.time",
    "common.sysctl",
    "common.limits",
    "security.audit",
    "security.firewall",
    "security.certs",
    "monitoring.node_exporter",
    "monitoring.logship",
    "monitoring.checks",
    "nginx",
    "nginx.vhosts",
    "nginx.certs",
    "app",
    "app.workers",
    "app.config",
    "app.cron",
    "app.migrations",
    "postgres",
    "postgres.roles",
    "postgres.backup",
    "redis",
    "redis.sentinel",
    "haproxy",
    "haproxy.backends",
    "kubernetes.node",
    "kubernetes.images",
    "docker",
    "backup.restic",
    "storage.mounts",
    "tenants.dirs",
    "tenants.users",
    "tenants.vhosts",
    "tenants.quotas",
];

const PKGS: &[(&str, &str, &str)] = &[
    ("libssl3", "3.0.15-1~deb12u1", "3.0.16-1~deb12u1"),
    ("python3.11", "3.11.2-6+deb12u4", "3.11.2-6+deb12u5"),
    ("curl", "7.88.1-10+deb12u7", "7.88.1-10+deb12u8"),
    ("rsync", "3.2.7-1", "3.2.7-1+deb12u1"),
    ("jq", "1.6-2.1", "1.6-2.1+deb12u1"),
    ("libpq5", "15.8-0+deb12u1", "15.10-0+deb12u1"),
    ("node-exporter", "1.5.0-1+b6", "1.5.0-1+b7"),
    ("restic", "0.14.0-1+b5", "0.14.0-1+b6"),
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    File,
    Directory,
    Pkg,
    /// watches the state before it: restarts when it changed, skipped when it failed
    Service,
    Cmd,
    /// `unless` was true: not run (`skip_watch`)
    CmdUnless,
    /// `onchanges` on the state before it
    CmdOnchanges,
    Test,
    /// `test.configurable_test_state` with `result: None`
    TestNone,
    User,
}

const KINDS: &[Kind] = &[
    Kind::File,
    Kind::Directory,
    Kind::Pkg,
    Kind::Service,
    Kind::Cmd,
    Kind::CmdUnless,
    Kind::CmdOnchanges,
    Kind::Test,
    Kind::TestNone,
    Kind::User,
];
/// States per kind (per 100).
const KIND_WEIGHTS: &[u32] = &[30, 7, 14, 9, 9, 4, 5, 14, 3, 5];

/// One state of the run: everything its key is made of, from (seed, i) alone,
/// so a first pass can find the dotted keys without generating the states.
struct Def {
    kind: Kind,
    module: &'static str,
    fun: &'static str,
    id: String,
    name: String,
    sls: &'static str,
    /// the package of a pkg state
    pkg: usize,
}

impl Def {
    fn new(seed: u64, i: usize, n: usize) -> Def {
        let mut r = Rng::new(mix(seed, i as u64));
        let kind = KINDS[r.weighted(KIND_WEIGHTS)];
        // contiguous blocks, as a top file's SLS run one after the other
        let sls = BIG_SLS[i * BIG_SLS.len().min(n) / n.max(1)];
        let top = sls.split('.').next().unwrap_or(sls);
        let leaf = sls.rsplit('.').next().unwrap_or(sls);
        let width = n.saturating_sub(1).to_string().len().max(4);
        let k = format!("{i:0width$}");
        let pkg = r.below(PKGS.len());
        let (module, fun, id, name) = match kind {
            Kind::File => {
                let p = format!("/etc/{top}/{leaf}.d/{leaf}-{k}.conf");
                ("file", "managed", p.clone(), p)
            }
            Kind::Directory => {
                let p = format!("/srv/{top}/{leaf}-{k}");
                ("file", "directory", p.clone(), p)
            }
            Kind::Pkg => (
                "pkg",
                "installed",
                format!("{sls}.pkg.{k}"),
                PKGS[pkg].0.to_string(),
            ),
            Kind::Service => (
                "service",
                "running",
                format!("{sls}.service.{k}"),
                format!("{leaf}-worker@{k}"),
            ),
            Kind::Cmd => (
                "cmd",
                "run",
                format!("{sls}.task.{k}"),
                format!("/opt/{top}/bin/{leaf}-task --shard {i}"),
            ),
            Kind::CmdUnless => (
                "cmd",
                "run",
                format!("{sls}.init.{k}"),
                format!("/opt/{top}/bin/init --step {i}"),
            ),
            Kind::CmdOnchanges => (
                "cmd",
                "run",
                format!("{sls}.reload.{k}"),
                format!("systemctl reload {top}"),
            ),
            Kind::Test => {
                let id = format!("check.{sls}.{k}");
                ("test", "succeed_without_changes", id.clone(), id)
            }
            Kind::TestNone => {
                let id = format!("review.{sls}.{k}");
                ("test", "configurable_test_state", id.clone(), id)
            }
            Kind::User => (
                "user",
                "present",
                format!("{sls}.user.{k}"),
                format!("svc{k}"),
            ),
        };
        Def {
            kind,
            module,
            fun,
            id,
            name,
            sls,
            pkg,
        }
    }

    /// The state key as Salt makes it, before the returner rewrites dots.
    fn key(&self) -> String {
        format!(
            "{}_|-{}_|-{}_|-{}",
            self.module, self.id, self.name, self.fun
        )
    }
}

/// round(x, 3), as Salt does for durations (ms)
fn ms(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The comment of the one `pkg.installed` in a big return that fails
/// quoting all dpkg printed: past the page's 64 KB fold.
pub const LONG_COMMENT_BYTES: usize = 100_000;

/// Which state of a return of `n` states fails with the long comment: the
/// first `pkg.installed`.
fn long_comment_at(seed: u64, n: usize) -> Option<usize> {
    (0..n).find(|&i| Def::new(seed, i, n).kind == Kind::Pkg)
}

/// Which state of a return of `n` states is a `cmd.run` named by its inline
/// script, many lines long: the first `cmd.run` that always runs.
fn script_at(seed: u64, n: usize) -> Option<usize> {
    (0..n).find(|&i| Def::new(seed, i, n).kind == Kind::Cmd)
}

/// State `i` of a return of `n` states, the one named by a script included.
fn def_at(seed: u64, i: usize, n: usize, script_at: Option<usize>) -> Def {
    let mut d = Def::new(seed, i, n);
    if script_at == Some(i) {
        let sls = d.sls;
        let top = sls.split('.').next().unwrap_or(sls);
        let leaf = sls.rsplit('.').next().unwrap_or(sls);
        d.name = format!(
            "set -eu\ncd /opt/{top}\nfor shard in $(seq 0 63); do\n  ./bin/{leaf}-task --shard \"$shard\" --verify --timeout 600\n  echo \"shard $shard verified\" >> /var/log/{top}/{leaf}-verify.log\ndone\nsystemctl reload {top}\n"
        );
    }
    d
}

/// The `cmd.run` named by its script, for the marker: (its key as the
/// returner stores it, its `__id__`, its name).
pub fn script_state(seed: u64, n: usize) -> Option<(String, String, String)> {
    let i = script_at(seed, n)?;
    let d = def_at(seed, i, n, Some(i));
    Some((d.key().replace('.', "_"), d.id, d.name))
}

/// The state with the long comment, for the marker: (its key as the
/// returner stores it, its `__id__`, the comment's bytes).
pub fn long_comment(seed: u64, n: usize) -> Option<(String, String, usize)> {
    let d = Def::new(seed, long_comment_at(seed, n)?, n);
    Some((d.key().replace('.', "_"), d.id, LONG_COMMENT_BYTES))
}

/// What `write_states` counted.
pub struct StateRun {
    pub succeeded: i64,
    pub failed: i64,
    /// when the last state finished, µs
    pub end_us: i64,
}

/// Appends the `data` of a state return with `n` states, already as the
/// returner rewrites it (dots to `_`, `_orig_key` where the first dotted key
/// was, holding the last one): `{"<key>": {state}, …}`.
pub fn write_states(
    n: usize,
    seed: u64,
    minion: &str,
    start_us: i64,
    out: &mut String,
) -> StateRun {
    // Pass 1: keys only, for the top-level `_orig_key`.
    let mut first_dotted = None;
    let mut last_dotted = None;
    let script = script_at(seed, n);
    for i in 0..n {
        let key = def_at(seed, i, n, script).key();
        if key.contains('.') {
            first_dotted.get_or_insert(i);
            last_dotted = Some(key);
        }
    }
    // Pass 2: the states, in run order.
    let mut t = start_us;
    let (mut succeeded, mut failed) = (0i64, 0i64);
    // (id, sls, changed, failed) of the state before
    let mut prev: Option<(String, &str, bool, bool)> = None;
    let long_at = long_comment_at(seed, n);
    out.push('{');
    for i in 0..n {
        let d = def_at(seed, i, n, script);
        let mut r = Rng::new(mix(seed ^ 0x5747_4154_4553, i as u64));
        if i > 0 {
            out.push_str(", ");
        }
        if first_dotted == Some(i) {
            if let Some(last) = &last_dotted {
                out.push_str("\"_orig_key\": ");
                write_str(last, out);
                out.push_str(", ");
            }
        }
        write_str(&d.key().replace('.', "_"), out);
        out.push_str(": ");
        let long = long_at == Some(i);
        let (state, result, changed, dur) = state(&d, i, minion, prev.as_ref(), t, long, &mut r);
        convert_keys(state).write(out);
        if result == Some(false) {
            failed += 1;
        } else {
            succeeded += 1;
        }
        t += (dur * 1000.0) as i64 + r.range(100.0, 2500.0) as i64;
        prev = Some((d.id, d.sls, changed, result == Some(false)));
    }
    out.push('}');
    StateRun {
        succeeded,
        failed,
        end_us: t,
    }
}

/// One state: (value, result, changed, duration ms).
fn state(
    d: &Def,
    i: usize,
    minion: &str,
    prev: Option<&(String, &str, bool, bool)>,
    t: i64,
    long_comment: bool,
    r: &mut Rng,
) -> (J, Option<bool>, bool, f64) {
    let start = s(time_of_day(t));
    let none = || J::Obj(vec![]);
    let run_num = J::Int(i as i64);
    let (prev_changed, prev_failed) = prev.map_or((false, false), |p| (p.2, p.3));
    // Requisites: a service watches, an onchanges command waits on, the state before it.
    let not_run = match d.kind {
        Kind::Service if prev_failed => Some((
            false,
            format!(
                "One or more requisite failed: {}.{}",
                prev.map_or(d.sls, |p| p.1),
                prev.map_or("", |p| p.0.as_str())
            ),
        )),
        Kind::CmdOnchanges if !prev_changed => Some((
            true,
            "State was not run because none of the onchanges reqs changed".to_string(),
        )),
        _ => None,
    };
    if let Some((result, comment)) = not_run {
        let dur = ms(r.range(0.004, 0.012));
        let st = obj! {
            "changes" => none(),
            "result" => J::Bool(result),
            "duration" => J::Float(dur),
            "start_time" => start,
            "comment" => s(comment),
            "__state_ran__" => J::Bool(false),
            "__run_num__" => run_num,
            "__sls__" => s(d.sls),
            "__id__" => s(&d.id),
            "name" => s(&d.name),
        };
        return (st, Some(result), false, dur);
    }
    if d.kind == Kind::CmdUnless {
        let dur = ms(r.range(3.0, 40.0));
        let st = obj! {
            "result" => J::Bool(true),
            "name" => s(&d.name),
            "changes" => none(),
            "comment" => s("unless condition is true"),
            "__sls__" => s(d.sls),
            "__id__" => s(&d.id),
            "skip_watch" => J::Bool(true),
            "__run_num__" => run_num,
            "start_time" => start,
            "duration" => J::Float(dur),
        };
        return (st, Some(true), false, dur);
    }
    let (result, changes, comment, dur) = if long_comment {
        let (name, _, new) = PKGS[d.pkg];
        let comment = dpkg_failure(LONG_COMMENT_BYTES, name, new);
        (Some(false), none(), comment, ms(r.range(8000.0, 40000.0)))
    } else {
        body(d, minion, prev_changed, r)
    };
    let changed = matches!(&changes, J::Obj(c) if !c.is_empty());
    let mut st = if d.kind == Kind::File {
        obj! {
            "changes" => changes,
            "comment" => s(comment),
            "name" => s(&d.name),
            "result" => opt_bool(result),
        }
    } else {
        obj! {
            "name" => s(&d.name),
            "changes" => changes,
            "result" => opt_bool(result),
            "comment" => s(comment),
        }
    };
    if d.kind == Kind::File && r.chance(0.003) {
        st.set(
            "warnings",
            J::Arr(vec![s(
                "Use of argument 'backup' is deprecated and will be removed in Salt 3009.",
            )]),
        );
    }
    st.set("__sls__", s(d.sls));
    st.set("__run_num__", run_num);
    st.set("start_time", start);
    st.set("duration", J::Float(dur));
    st.set("__id__", s(&d.id));
    (st, result, changed, dur)
}

fn opt_bool(b: Option<bool>) -> J {
    b.map_or(J::Null, J::Bool)
}

/// (result, changes, comment, duration ms) of a state that ran.
fn body(d: &Def, minion: &str, prev_changed: bool, r: &mut Rng) -> (Option<bool>, J, String, f64) {
    let none = || J::Obj(vec![]);
    match d.kind {
        Kind::File => {
            if r.chance(0.005) {
                let c = format!(
                    "Unable to manage file: Jinja variable 'dict object' has no attribute '{}'",
                    d.sls.replace('.', "_")
                );
                (Some(false), none(), c, ms(r.range(5.0, 30.0)))
            } else if r.chance(0.06) {
                let n = 1 + r.below(40);
                let diff = format!(
                    "--- \n+++ \n@@ -{n},3 +{n},3 @@\n # managed by salt for {minion}\n-max_clients = {}\n+max_clients = {}\n # end\n",
                    64 << r.below(4),
                    128 << r.below(4)
                );
                (
                    Some(true),
                    obj! {"diff" => s(diff)},
                    format!("File {} updated", d.name),
                    ms(r.range(8.0, 60.0)),
                )
            } else {
                (
                    Some(true),
                    none(),
                    format!("File {} is in the correct state", d.name),
                    ms(r.range(3.0, 25.0)),
                )
            }
        }
        Kind::Directory => {
            if r.chance(0.03) {
                (
                    Some(true),
                    J::Obj(vec![(d.name.clone(), s("New Dir"))]),
                    format!("Directory {} updated", d.name),
                    ms(r.range(2.0, 8.0)),
                )
            } else {
                (
                    Some(true),
                    none(),
                    format!("The directory {} is in the correct state", d.name),
                    ms(r.range(1.0, 5.0)),
                )
            }
        }
        Kind::Pkg => {
            let (name, old, new) = PKGS[d.pkg];
            if r.chance(0.01) {
                let c = format!("Problem encountered installing package(s). Additional info follows:\n\nerrors:\n    - Running scope as unit: run-r{:x}.scope\n      E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process {} (apt-get)", r.next_u64() & 0xffff_ffff, 1000 + r.below(30000));
                (Some(false), none(), c, ms(r.range(800.0, 4000.0)))
            } else if r.chance(0.03) {
                (
                    Some(true),
                    J::Obj(vec![(
                        name.to_string(),
                        obj! {"new" => s(new), "old" => s(old)},
                    )]),
                    format!("The following packages were installed/updated: {name}"),
                    ms(r.range(2000.0, 25000.0)),
                )
            } else {
                (
                    Some(true),
                    none(),
                    "All specified packages are already installed".into(),
                    ms(r.range(15.0, 60.0)),
                )
            }
        }
        Kind::Service => {
            if r.chance(0.01) {
                (Some(false), none(), format!("Job for {0}.service failed because the control process exited with error code.\nSee \"systemctl status {0}.service\" and \"journalctl -xeu {0}.service\" for details.", d.name), ms(r.range(200.0, 3000.0)))
            } else if prev_changed {
                (
                    Some(true),
                    J::Obj(vec![(d.name.clone(), J::Bool(true))]),
                    "Service restarted".into(),
                    ms(r.range(300.0, 3000.0)),
                )
            } else {
                (
                    Some(true),
                    none(),
                    format!("The service {} is already running", d.name),
                    ms(r.range(15.0, 60.0)),
                )
            }
        }
        Kind::Cmd | Kind::CmdOnchanges | Kind::CmdUnless => {
            let pid = J::Int(1000 + r.below(4_000_000) as i64);
            let (result, rc, out, err) = if r.chance(0.03) {
                (
                    false,
                    1 + r.below(3) as i64,
                    "",
                    "error: shard is locked by another run (lock held since 02:14)",
                )
            } else {
                (true, 0, "done", "")
            };
            (
                Some(result),
                obj! {"pid" => pid, "retcode" => J::Int(rc), "stdout" => s(out), "stderr" => s(err)},
                format!("Command \"{}\" run", d.name),
                ms(r.range(5.0, 900.0)),
            )
        }
        Kind::Test => (Some(true), none(), "Success!".into(), ms(r.range(0.1, 0.5))),
        Kind::TestNone => (
            None,
            obj! {"testing" => obj! {"old" => s("Unchanged"), "new" => s("Something pretended to change")}},
            format!("{} is held for review: not applied", d.sls),
            ms(r.range(0.1, 0.5)),
        ),
        Kind::User => {
            if r.chance(0.02) {
                (
                    Some(true),
                    obj! {"groups" => J::Arr(vec![s("deploy"), s("docker")])},
                    format!("Updated user {}", d.name),
                    ms(r.range(20.0, 80.0)),
                )
            } else {
                (
                    Some(true),
                    none(),
                    format!("User {} is present and up to date", d.name),
                    ms(r.range(5.0, 30.0)),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_keys_are_unique_after_the_dots_are_rewritten() {
        let n = 5000;
        let keys: std::collections::BTreeSet<String> = (0..n)
            .map(|i| Def::new(9, i, n).key().replace('.', "_"))
            .collect();
        assert_eq!(keys.len(), n);
    }
}

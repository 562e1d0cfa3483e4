//! The functions jobs run, and what they are run with: users, commands,
//! grains, packages; the index names the returner writes them to.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fun {
    StateApply,
    StateHighstate,
    CmdRun,
    TestVersion,
    GrainsItem,
    PkgListUpgrades,
    SyncAll,
    MineUpdate,
    /// blacklisted in the returner (`functions_blacklist`): no return documents,
    /// but the job cache and the event cache see the job
    TestPing,
    RunnerListJobs,
    RunnerLookupJid,
    /// only in the `--output-bytes` jobs, never in the mix
    CmdRunAll,
    FileFind,
}

pub const FUNS: &[Fun] = &[
    Fun::StateApply,
    Fun::StateHighstate,
    Fun::CmdRun,
    Fun::TestVersion,
    Fun::GrainsItem,
    Fun::PkgListUpgrades,
    Fun::SyncAll,
    Fun::MineUpdate,
    Fun::TestPing,
    Fun::RunnerListJobs,
    Fun::RunnerLookupJid,
];
/// Functions of the special jobs only (`--output-bytes`): not in the mix.
pub const SPECIAL_FUNS: &[Fun] = &[Fun::CmdRunAll, Fun::FileFind];
/// Jobs per function (per 1000 jobs).
pub(super) const FUN_WEIGHTS: &[u32] = &[110, 30, 290, 130, 90, 70, 60, 40, 90, 45, 45];

impl Fun {
    pub fn name(self) -> &'static str {
        match self {
            Fun::StateApply => "state.apply",
            Fun::StateHighstate => "state.highstate",
            Fun::CmdRun => "cmd.run",
            Fun::TestVersion => "test.version",
            Fun::GrainsItem => "grains.item",
            Fun::PkgListUpgrades => "pkg.list_upgrades",
            Fun::SyncAll => "saltutil.sync_all",
            Fun::MineUpdate => "mine.update",
            Fun::TestPing => "test.ping",
            Fun::RunnerListJobs => "runner.jobs.list_jobs",
            Fun::RunnerLookupJid => "runner.jobs.lookup_jid",
            Fun::CmdRunAll => "cmd.run_all",
            Fun::FileFind => "file.find",
        }
    }
    pub fn is_runner(self) -> bool {
        matches!(self, Fun::RunnerListJobs | Fun::RunnerLookupJid)
    }
    pub fn is_state(self) -> bool {
        matches!(self, Fun::StateApply | Fun::StateHighstate)
    }
}

/// The alias the returner posts to: `<prefix>-<fun with '.' -> '_'>`.
pub fn return_index(prefix: &str, fun: Fun) -> String {
    format!("{prefix}-{}", fun.name().replace('.', "_"))
}
pub fn job_cache_index(prefix: &str) -> String {
    format!("{prefix}-master-job-cache")
}
pub fn event_index(prefix: &str) -> String {
    format!("{prefix}-master-event-cache")
}

pub const USERS: &[&str] = &[
    "root",
    "sudo_alice",
    "sudo_bob",
    "sudo_carol",
    "sudo_dave",
    "sudo_erin",
];
pub(super) const USER_WEIGHTS: &[u32] = &[55, 12, 10, 10, 8, 5];

/// cmd.run commands: (command, failure probability, failing exit code, failing output, risky)
pub const COMMANDS: &[(&str, f64, i64, &str, bool)] = &[
    ("uptime", 0.0, 0, "", false),
    ("df -h /", 0.0, 0, "", false),
    ("systemctl is-active nginx", 0.05, 3, "inactive", false),
    ("id -un", 0.0, 0, "", false),
    ("cat /etc/debian_version", 0.0, 0, "", false),
    ("hostname -f", 0.0, 0, "", false),
    ("grep -c ERROR /var/log/app/app.log", 0.4, 1, "0", false),
    ("tail -n 3 /var/log/syslog", 0.0, 0, "", false),
    ("curl -fsS http://localhost/healthz", 0.03, 7, "curl: (7) Failed to connect to localhost port 80 after 0 ms: Couldn't connect to server", false),
    ("systemctl restart nginx", 0.04, 1, "Job for nginx.service failed because the control process exited with error code.\nSee \"systemctl status nginx.service\" and \"journalctl -xeu nginx.service\" for details.", true),
    ("rm -rf /tmp/x", 0.0, 0, "", true),
];
pub(super) const COMMAND_WEIGHTS: &[u32] = &[14, 12, 10, 8, 8, 8, 10, 10, 10, 5, 5];

pub(super) const GRAINS_SETS: &[&[&str]] = &[
    &["os", "id", "saltversion"],
    &["os", "osrelease", "kernelrelease"],
    &["num_cpus", "mem_total"],
];

/// pkg.list_upgrades candidates (dotted names get rewritten, with `_orig_key`)
pub(super) const UPGRADES: &[(&str, &str)] = &[
    ("openssl", "3.0.16-1~deb12u1"),
    ("libssl3", "3.0.16-1~deb12u1"),
    ("python3.11", "3.11.2-6+deb12u5"),
    ("libpython3.11-minimal", "3.11.2-6+deb12u5"),
    ("curl", "7.88.1-10+deb12u8"),
    ("tzdata", "2026a-0+deb12u1"),
    ("linux-image-amd64", "6.1.129-1"),
    ("ca-certificates", "20230311+deb12u1"),
];

pub(super) const SYNC_KINDS: &[&str] = &[
    "clouds",
    "beacons",
    "modules",
    "states",
    "sdb",
    "grains",
    "renderers",
    "returners",
    "output",
    "utils",
    "log_handlers",
    "thorium",
    "proxymodules",
    "engines",
    "executors",
    "serializers",
    "matchers",
];

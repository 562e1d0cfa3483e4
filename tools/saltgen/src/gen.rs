//! Job planning and document generation. Pure: no I/O, reproducible from the seed.

use crate::json::{convert_keys, s, J};
use crate::obj;
use crate::states::{minion_id, run_list, Kind, StateDef, ROLES};
use crate::time::{iso_utc, jid, time_of_day};

// ---- PRNG -------------------------------------------------------------------

/// splitmix64: small, seedable, good enough for synthetic data.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5a17_5c09_e000_0001)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    pub fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.unit()
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
    /// An index into `weights`, proportional to the weight.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut x = self.below(total as usize) as u32;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }
}

fn mix(a: u64, b: u64) -> u64 {
    Rng::new(a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_u64()
}

/// round(x, 3) as Salt does for durations (ms).
fn ms(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

// ---- configuration ----------------------------------------------------------

#[derive(Clone, Debug)]
pub struct Config {
    pub prefix: String,
    pub returns: u64,
    pub minions: usize,
    pub days: f64,
    pub seed: u64,
    /// end of the time span, µs since the epoch
    pub end_us: i64,
    /// master id; runner returns get `minion: "<master>"` (Salt's default id is `<host>_master`)
    pub master: String,
    /// the returner's `states_count` option: `counts: {succeeded, failed}`
    pub states_count: bool,
    /// padding states added to every state run (0..=12), to test bigger documents
    pub extra_states: usize,
    /// also write `salt/job/<jid>/ret/<minion>` events for test.ping jobs
    pub ret_events: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            prefix: "saltgen".into(),
            returns: 10_000,
            minions: 2_000,
            days: 30.0,
            seed: 1,
            end_us: crate::time::parse_end("2026-12-01T00:00:00").unwrap(),
            master: "salt01_master".into(),
            states_count: false,
            extra_states: 0,
            ret_events: false,
        }
    }
}

// ---- the fleet --------------------------------------------------------------

#[derive(Clone, Debug)]
pub struct Minion {
    pub id: String,
    pub role: usize,
    /// accepted key, never answers (decommissioned, powered off)
    pub offline: bool,
    /// fails states far more often than the rest
    pub flaky: bool,
    pub version: &'static str,
}

#[derive(Clone, Debug)]
pub struct Fleet {
    pub minions: Vec<Minion>,
    /// per role, minion indices sorted by id
    pub by_role: Vec<Vec<u32>>,
    /// all minion indices sorted by id
    pub sorted: Vec<u32>,
}

impl Fleet {
    pub fn new(n: usize, rng: &mut Rng) -> Fleet {
        let total: u32 = ROLES.iter().map(|r| r.share).sum();
        let mut counts: Vec<usize> = ROLES
            .iter()
            .map(|r| n * r.share as usize / total as usize)
            .collect();
        let assigned: usize = counts.iter().sum();
        counts[0] += n - assigned;
        let mut minions = Vec::with_capacity(n);
        for (role, c) in counts.iter().enumerate() {
            for k in 0..*c {
                minions.push(Minion {
                    id: minion_id(role, k),
                    role,
                    offline: rng.chance(0.006),
                    flaky: rng.chance(0.03),
                    version: if rng.chance(0.05) { "3007.8" } else { "3008.5" },
                });
            }
        }
        let mut sorted: Vec<u32> = (0..minions.len() as u32).collect();
        sorted.sort_by(|a, b| minions[*a as usize].id.cmp(&minions[*b as usize].id));
        let mut by_role = vec![Vec::new(); ROLES.len()];
        for i in &sorted {
            by_role[minions[*i as usize].role].push(*i);
        }
        Fleet {
            minions,
            by_role,
            sorted,
        }
    }
}

// ---- functions --------------------------------------------------------------

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
/// Jobs per function (per 1000 jobs).
const FUN_WEIGHTS: &[u32] = &[110, 30, 290, 130, 90, 70, 60, 40, 90, 45, 45];

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
const USER_WEIGHTS: &[u32] = &[55, 12, 10, 10, 8, 5];

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
const COMMAND_WEIGHTS: &[u32] = &[14, 12, 10, 8, 8, 8, 10, 10, 10, 5, 5];

const GRAINS_SETS: &[&[&str]] = &[
    &["os", "id", "saltversion"],
    &["os", "osrelease", "kernelrelease"],
    &["num_cpus", "mem_total"],
];

/// pkg.list_upgrades candidates (dotted names get rewritten, with `_orig_key`)
const UPGRADES: &[(&str, &str)] = &[
    ("openssl", "3.0.16-1~deb12u1"),
    ("libssl3", "3.0.16-1~deb12u1"),
    ("python3.11", "3.11.2-6+deb12u5"),
    ("libpython3.11-minimal", "3.11.2-6+deb12u5"),
    ("curl", "7.88.1-10+deb12u8"),
    ("tzdata", "2026a-0+deb12u1"),
    ("linux-image-amd64", "6.1.129-1"),
    ("ca-certificates", "20230311+deb12u1"),
];

const SYNC_KINDS: &[&str] = &[
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

// ---- jobs -------------------------------------------------------------------

#[derive(Clone, Debug)]
pub struct Job {
    pub fun: Fun,
    pub tgt: J,
    pub tgt_type: &'static str,
    /// targeted minions, in the order of the publish event's `minions`
    pub minions: Vec<u32>,
    /// minions that return (a subset of `minions`)
    pub returning: Vec<u32>,
    pub start_us: i64,
    pub seed: u64,
    pub user: &'static str,
    pub arg: Vec<J>,
    /// cmd index / grains set / sls filter
    pub variant: usize,
    /// `test=True`: the arg holds a kwarg object, which the engine rejects in the
    /// job cache and the event cache (see tests/fixtures/README.md): no such docs.
    pub test_mode: bool,
    pub render_error: bool,
    /// state ids changed by this run (a rollout), and one id broken on a share of minions
    pub rollout: Vec<&'static str>,
    pub broken: Option<(&'static str, f64)>,
}

impl Job {
    /// Return documents this job writes.
    pub fn return_docs(&self, cfg: &Config) -> usize {
        if self.fun.is_runner() {
            1
        } else if self.fun == Fun::TestPing || (self.render_error && cfg.states_count) {
            0
        } else {
            self.returning.len()
        }
    }
    pub fn has_publish_docs(&self) -> bool {
        !self.fun.is_runner() && !self.test_mode
    }
}

pub struct Plan {
    pub cfg: Config,
    pub fleet: Fleet,
    /// in time order
    pub jobs: Vec<Job>,
}

/// State ids a rollout can change (files and packages).
const ROLLOUT_IDS: &[&str] = &[
    "motd",
    "sshd.config",
    "chrony.conf",
    "base.packages",
    "users.deploy",
    "nginx.conf",
    "nginx.vhost.www",
    "nginx",
    "app.config",
    "postgres.conf",
    "redis.conf",
    "kubelet.pkg",
    "haproxy.cfg",
    "postgres.pkg",
    "redis.pkg",
];
const BROKEN_IDS: &[&str] = &[
    "nginx.configtest",
    "app.migrate",
    "redis.ping",
    "postgres.service",
    "kubelet.service",
    "haproxy.service",
    "sshd.service",
    "base.packages",
];
/// `state.apply <sls>`: "" runs the whole tree (top file)
const SLS_ARGS: &[&str] = &["", "", "", "common.ssh", "common.packages", "common.time"];

impl Plan {
    pub fn new(cfg: Config) -> Plan {
        let mut rng = Rng::new(cfg.seed);
        let fleet = Fleet::new(cfg.minions.max(1), &mut rng);
        let mut jobs = Vec::new();
        let mut total = 0u64;
        while total < cfg.returns {
            let mut job = plan_job(&fleet, &mut rng);
            let n = job.return_docs(&cfg) as u64;
            if total + n > cfg.returns {
                // Trim the last job to land exactly on --returns.
                let keep = (cfg.returns - total) as usize;
                job.returning.truncate(keep);
                job.minions = job.returning.clone();
                job.tgt = J::Arr(
                    job.minions
                        .iter()
                        .map(|m| s(&fleet.minions[*m as usize].id))
                        .collect(),
                );
                job.tgt_type = "list";
            }
            total += job.return_docs(&cfg) as u64;
            jobs.push(job);
        }
        // Start times: uniform over the span, sorted, unique to the microsecond.
        let span = (cfg.days * 86_400e6) as i64;
        let first = cfg.end_us - span;
        let last = cfg.end_us - 600_000_000; // leave room for the slowest returns
        let mut times: Vec<i64> = (0..jobs.len())
            .map(|_| first + (rng.unit() * (last - first).max(1) as f64) as i64)
            .collect();
        times.sort_unstable();
        for i in 1..times.len() {
            if times[i] <= times[i - 1] {
                times[i] = times[i - 1] + 1;
            }
        }
        for (job, t) in jobs.iter_mut().zip(times) {
            job.start_us = t;
        }
        Plan { cfg, fleet, jobs }
    }

    pub fn return_docs(&self) -> u64 {
        self.jobs
            .iter()
            .map(|j| j.return_docs(&self.cfg) as u64)
            .sum()
    }
}

fn pick_target(fleet: &Fleet, rng: &mut Rng, weights: [u32; 6]) -> (J, &'static str, Vec<u32>) {
    let ms = &fleet.minions;
    let id = |i: u32| s(&ms[i as usize].id);
    match rng.weighted(&weights) {
        0 => {
            let m = fleet.sorted[rng.below(fleet.sorted.len())];
            (id(m), "glob", vec![m])
        }
        1 => {
            let k = 2 + rng.below(9);
            let mut v: Vec<u32> = Vec::with_capacity(k);
            while v.len() < k.min(fleet.sorted.len()) {
                let m = fleet.sorted[rng.below(fleet.sorted.len())];
                if !v.contains(&m) {
                    v.push(m);
                }
            }
            (J::Arr(v.iter().map(|m| id(*m)).collect()), "list", v)
        }
        2 => {
            let r = rng.below(ROLES.len());
            let v = fleet.by_role[r].clone();
            if v.is_empty() {
                return pick_target(fleet, rng, [1, 0, 0, 0, 0, 0]);
            }
            (s(ROLES[r].glob), "glob", v)
        }
        3 => {
            let r = rng.below(ROLES.len());
            let v = fleet.by_role[r].clone();
            if v.is_empty() {
                return pick_target(fleet, rng, [1, 0, 0, 0, 0, 0]);
            }
            (
                s(format!("G@role:{} and G@os:Debian", ROLES[r].name)),
                "compound",
                v,
            )
        }
        4 => {
            // a slice of a big role: `web00*`, `k8s-node-01*`
            let r = if rng.chance(0.6) { 0 } else { 2 };
            let pool = &fleet.by_role[r];
            if pool.is_empty() {
                return pick_target(fleet, rng, [1, 0, 0, 0, 0, 0]);
            }
            let first = &ms[pool[rng.below(pool.len())] as usize].id;
            let cut = if r == 0 { 5 } else { 10 };
            let pat = format!("{}*", &first[..cut.min(first.len())]);
            let stem = &pat[..pat.len() - 1];
            let v: Vec<u32> = pool
                .iter()
                .copied()
                .filter(|m| ms[*m as usize].id.starts_with(stem))
                .collect();
            (s(pat), "glob", v)
        }
        _ => (s("*"), "glob", fleet.sorted.clone()),
    }
}

fn plan_job(fleet: &Fleet, rng: &mut Rng) -> Job {
    let fun = FUNS[rng.weighted(FUN_WEIGHTS)];
    let seed = rng.next_u64();
    let user = USERS[rng.weighted(USER_WEIGHTS)];
    let mut job = Job {
        fun,
        tgt: J::Null,
        tgt_type: "glob",
        minions: vec![],
        returning: vec![],
        start_us: 0,
        seed,
        user,
        arg: vec![],
        variant: 0,
        test_mode: false,
        render_error: false,
        rollout: vec![],
        broken: None,
    };
    if fun.is_runner() {
        return job;
    }
    // target weights: single, list, role glob, compound, slice glob, '*'
    let weights = match fun {
        Fun::StateApply => [40, 25, 14, 6, 14, 1],
        Fun::StateHighstate => [40, 20, 20, 8, 11, 1],
        Fun::CmdRun => [50, 30, 6, 3, 10, 1],
        Fun::TestVersion | Fun::TestPing => [35, 25, 12, 5, 18, 5],
        _ => [45, 25, 10, 5, 14, 1],
    };
    let (tgt, tgt_type, minions) = pick_target(fleet, rng, weights);
    job.tgt = tgt;
    job.tgt_type = tgt_type;
    match fun {
        Fun::StateApply | Fun::StateHighstate => {
            if fun == Fun::StateApply {
                job.variant = rng.below(SLS_ARGS.len());
                if !SLS_ARGS[job.variant].is_empty() {
                    job.arg.push(s(SLS_ARGS[job.variant]));
                }
                if rng.chance(0.06) {
                    job.test_mode = true;
                    job.arg
                        .push(obj! {"__kwarg__" => J::Bool(true), "test" => J::Bool(true)});
                }
            }
            job.render_error = !job.test_mode && rng.chance(0.006);
            if rng.chance(0.35) {
                for _ in 0..1 + rng.below(2) {
                    job.rollout.push(*rng.pick(ROLLOUT_IDS));
                }
            }
            if !job.test_mode && rng.chance(0.08) {
                job.broken = Some((*rng.pick(BROKEN_IDS), rng.range(0.1, 0.6)));
            }
        }
        Fun::CmdRun => {
            job.variant = rng.weighted(COMMAND_WEIGHTS);
            job.arg.push(s(COMMANDS[job.variant].0));
        }
        Fun::GrainsItem => {
            job.variant = rng.below(GRAINS_SETS.len());
            job.arg = GRAINS_SETS[job.variant].iter().map(|g| s(*g)).collect();
        }
        _ => {}
    }
    job.returning = minions
        .iter()
        .copied()
        .filter(|m| !fleet.minions[*m as usize].offline && !rng.chance(0.002))
        .collect();
    job.minions = minions;
    job
}

// ---- documents --------------------------------------------------------------

/// One document for the bulk API: the alias (or index) it goes to, an optional id, the body.
#[derive(Clone, Debug)]
pub struct Doc {
    pub index: String,
    pub id: Option<String>,
    pub body: J,
}

fn uuid4(rng: &mut Rng) -> String {
    let a = rng.next_u64();
    let b = rng.next_u64();
    let h = format!("{a:016x}{b:016x}");
    format!(
        "{}-{}-4{}-{:x}{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        8 + (b >> 62),
        &h[17..20],
        &h[20..32]
    )
}

fn return_doc(
    ts: i64,
    minion: &str,
    fun: &str,
    job_jid: &str,
    retcode: i64,
    counts: J,
    data: J,
) -> J {
    obj! {
        "@timestamp" => s(iso_utc(ts)),
        "success" => J::Bool(retcode == 0),
        "retcode" => J::Int(retcode),
        "minion" => s(minion),
        "fun" => s(fun),
        "jid" => s(job_jid),
        "counts" => counts,
        "data" => convert_keys(data),
    }
}

impl Plan {
    /// Every document of job `j`: its returns, then its job-cache load and events.
    pub fn job_docs(&self, j: usize, out: &mut Vec<Doc>) {
        let job = &self.jobs[j];
        let cfg = &self.cfg;
        let job_jid = jid(job.start_us);
        let mut rng = Rng::new(job.seed);
        let fun = job.fun.name();
        let index = return_index(&cfg.prefix, job.fun);

        if job.fun.is_runner() {
            let (fun_args, ret, tail): (Vec<J>, &str, Vec<(String, J)>) = match job.fun {
                Fun::RunnerListJobs => (
                    vec![],
                    LIST_JOBS_TRACEBACK,
                    vec![
                        ("success".into(), J::Bool(false)),
                        ("retcode".into(), J::Int(1)),
                    ],
                ),
                _ => {
                    let other = if j > 0 {
                        jid(self.jobs[j - 1].start_us)
                    } else {
                        job_jid.clone()
                    };
                    (
                        vec![s(other)],
                        "Requested returner could not be loaded. No JIDs could be retrieved.",
                        vec![("success".into(), J::Bool(true))],
                    )
                }
            };
            let mut data = obj! {
                "fun" => s(fun),
                "jid" => s(&job_jid),
                "user" => s(job.user),
                "fun_args" => J::Arr(fun_args),
                "_stamp" => s(iso_utc(job.start_us + rng.range(150_000.0, 400_000.0) as i64)),
                "return" => s(ret),
            };
            if let J::Obj(items) = &mut data {
                items.extend(tail);
            }
            let ts = job.start_us + rng.range(500_000.0, 1_500_000.0) as i64;
            out.push(Doc {
                index,
                id: None,
                body: return_doc(ts, &cfg.master, fun, &job_jid, 1, J::Obj(vec![]), data),
            });
            return;
        }

        // Returns.
        let mut last_ret: Option<(i64, u32)> = None;
        for &m in &job.returning {
            let minion = &self.fleet.minions[m as usize];
            let mut r = Rng::new(mix(job.seed, m as u64 + 1));
            let (retcode, data, latency, counts) = match job.fun {
                Fun::StateApply | Fun::StateHighstate => self.state_return(job, minion, &mut r),
                Fun::CmdRun => {
                    let (cmd, p, code, fail_out, _) = COMMANDS[job.variant];
                    let failed = r.chance(p);
                    let out = if failed {
                        fail_out.to_string()
                    } else {
                        cmd_stdout(cmd, minion, &mut r)
                    };
                    (
                        if failed { code } else { 0 },
                        s(out),
                        r.range(0.2, 3.0),
                        None,
                    )
                }
                Fun::TestVersion | Fun::TestPing => (0, s(minion.version), r.range(0.1, 1.5), None),
                Fun::GrainsItem => {
                    let mut items = Vec::new();
                    for g in GRAINS_SETS[job.variant] {
                        let v = match *g {
                            "os" => s("Debian"),
                            "id" => s(&minion.id),
                            "saltversion" => s(minion.version),
                            "osrelease" => s("12"),
                            "kernelrelease" => s(if r.chance(0.8) {
                                "6.1.0-28-amd64"
                            } else {
                                "6.1.0-31-amd64"
                            }),
                            "num_cpus" => J::Int([2, 4, 8, 16][r.below(4)]),
                            _ => J::Int([3931, 7953, 16011, 32103][r.below(4)]),
                        };
                        items.push((g.to_string(), v));
                    }
                    (0, J::Obj(items), r.range(0.1, 1.2), None)
                }
                Fun::PkgListUpgrades => {
                    let mut items = Vec::new();
                    if r.chance(0.45) {
                        for (p, v) in UPGRADES {
                            if r.chance(0.35) {
                                items.push((p.to_string(), s(*v)));
                            }
                        }
                    }
                    (0, J::Obj(items), r.range(1.0, 8.0), None)
                }
                Fun::SyncAll => {
                    let fresh = r.chance(0.1);
                    let items = SYNC_KINDS
                        .iter()
                        .map(|k| {
                            let v = match (*k, fresh) {
                                ("modules", true) => vec![s("modules.saltscope_health")],
                                ("states", true) => vec![s("states.saltscope_app")],
                                _ => vec![],
                            };
                            (k.to_string(), J::Arr(v))
                        })
                        .collect();
                    (0, J::Obj(items), r.range(0.5, 4.0), None)
                }
                Fun::MineUpdate => (0, J::Bool(true), r.range(0.1, 1.0), None),
                _ => unreachable!(),
            };
            let ts = job.start_us + (latency * 1e6) as i64;
            if last_ret.is_none_or(|(t, _)| ts > t) {
                last_ret = Some((ts, m));
            }
            if job.fun == Fun::TestPing {
                continue; // functions_blacklist: no return document
            }
            if job.render_error && cfg.states_count {
                continue; // the returner raises counting a non-dict return: nothing written
            }
            let counts = counts.unwrap_or(J::Obj(vec![]));
            out.push(Doc {
                index: index.clone(),
                id: None,
                body: return_doc(ts, &minion.id, fun, &job_jid, retcode, counts, data),
            });
        }

        if !job.has_publish_docs() {
            return;
        }
        // The publish event: the only record of who ran what on which target.
        let stamp = job.start_us + rng.range(40.0, 160.0) as i64;
        let minions = J::Arr(
            job.minions
                .iter()
                .map(|m| s(&self.fleet.minions[*m as usize].id))
                .collect(),
        );
        out.push(Doc {
            index: event_index(&cfg.prefix),
            id: Some(uuid4(&mut rng)),
            body: obj! {
                "tag" => s(format!("salt/job/{job_jid}/new")),
                "data" => obj! {
                    "jid" => s(&job_jid),
                    "tgt_type" => s(job.tgt_type),
                    "tgt" => job.tgt.clone(),
                    "user" => s(job.user),
                    "fun" => s(fun),
                    "arg" => J::Arr(job.arg.clone()),
                    "minions" => minions,
                    "missing" => J::Arr(vec![]),
                    "_stamp" => s(iso_utc(stamp)),
                },
            },
        });
        // The job cache keeps the last save_load for the jid: the publish load, except for
        // test.ping, whose boolean return loads are the only ones the engine accepts.
        let load = match (job.fun, last_ret) {
            (Fun::TestPing, Some((ts, m))) => obj! {
                "cmd" => s("_return"),
                "id" => s(&self.fleet.minions[m as usize].id),
                "success" => J::Bool(true),
                "return" => J::Bool(true),
                "retcode" => J::Int(0),
                "jid" => s(&job_jid),
                "fun" => s(fun),
                "fun_args" => J::Arr(vec![]),
                "user" => s(job.user),
                "_stamp" => s(iso_utc(ts)),
                "ts" => J::Int(ts / 1_000_000),
            },
            _ => obj! {
                "cmd" => s("publish"),
                "tgt" => job.tgt.clone(),
                "fun" => s(fun),
                "arg" => J::Arr(job.arg.clone()),
                "tgt_type" => s(job.tgt_type),
                "ret" => s(""),
                "jid" => s(&job_jid),
                "kwargs" => obj! {
                    "show_timeout" => J::Bool(true),
                    "show_jid" => J::Bool(true),
                    "delimiter" => s(":"),
                },
                "user" => s(job.user),
            },
        };
        out.push(Doc {
            index: job_cache_index(&cfg.prefix),
            id: Some(job_jid.clone()),
            body: obj! {"jid" => s(&job_jid), "load" => load},
        });
        if cfg.ret_events && job.fun == Fun::TestPing {
            for &m in &job.returning {
                let minion = &self.fleet.minions[m as usize];
                let mut r = Rng::new(mix(job.seed, m as u64 + 1));
                let ts = job.start_us + (r.range(0.1, 1.5) * 1e6) as i64;
                out.push(Doc {
                    index: event_index(&cfg.prefix),
                    id: Some(uuid4(&mut rng)),
                    body: obj! {
                        "tag" => s(format!("salt/job/{job_jid}/ret/{}", minion.id)),
                        "data" => obj! {
                            "cmd" => s("_return"),
                            "id" => s(&minion.id),
                            "success" => J::Bool(true),
                            "return" => J::Bool(true),
                            "retcode" => J::Int(0),
                            "jid" => s(&job_jid),
                            "fun" => s(fun),
                            "fun_args" => J::Arr(vec![]),
                            "user" => s(job.user),
                            "_stamp" => s(iso_utc(ts)),
                        },
                    },
                });
            }
        }
    }

    /// (retcode, data before key rewriting, latency s, counts)
    fn state_return(&self, job: &Job, minion: &Minion, r: &mut Rng) -> (i64, J, f64, Option<J>) {
        let cfg = &self.cfg;
        if job.render_error {
            let msg = "Rendering SLS 'base:nginx' failed: Jinja variable 'dict object' has no attribute 'worker_processes'; line 12\n\n---\n[...]\n    - template: jinja\n    - context:\n        workers: {{ pillar['nginx']['worker_processes'] }}    <======================\n---";
            return (
                1,
                obj! {"return" => J::Arr(vec![s(msg)])},
                r.range(0.5, 2.0),
                None,
            );
        }
        let sls = SLS_ARGS[if job.fun == Fun::StateApply {
            job.variant
        } else {
            0
        }];
        let run: Vec<&StateDef> = run_list(minion.role, cfg.extra_states)
            .into_iter()
            .filter(|d| sls.is_empty() || d.sls == sls)
            .collect();
        // Which state fails on its own on this minion, if any.
        let failable: Vec<&str> = run.iter().filter(|d| d.can_fail).map(|d| d.id).collect();
        let mut fail_id: Option<&str> = None;
        if !job.test_mode {
            if let Some((id, share)) = job.broken {
                if failable.contains(&id) && r.chance(share) {
                    fail_id = Some(id);
                }
            }
            let p = if minion.flaky { 0.35 } else { 0.01 };
            if fail_id.is_none() && !failable.is_empty() && r.chance(p) {
                fail_id = Some(failable[r.below(failable.len())]);
            }
        }
        let mut t = job.start_us + r.range(300_000.0, 1_500_000.0) as i64;
        let mut changed: Vec<&str> = Vec::new();
        let mut failed: Vec<&str> = Vec::new();
        let mut items: Vec<(String, J)> = Vec::with_capacity(run.len());
        let (mut n_ok, mut n_fail) = (0i64, 0i64);
        let mut total_ms = 0.0;
        for (i, d) in run.iter().enumerate() {
            let this_ms: f64;
            let key = format!("{}_|-{}_|-{}_|-{}", d.module, d.id, d.name, d.fun);
            let start = time_of_day(t);
            let req_failed = d.req.is_some_and(|x| failed.contains(&x));
            let onch_skip = d.onchanges.is_some_and(|x| !changed.contains(&x));
            // services restart when a non-cmd state of their sls (or their watch) changed
            let restart = d.kind == Kind::Service
                && run[..i].iter().any(|p| {
                    (p.sls == d.sls || Some(p.id) == d.req)
                        && !matches!(p.kind, Kind::Cmd(..))
                        && changed.contains(&p.id)
                });
            let state = if req_failed || onch_skip {
                let dur = ms(r.range(0.004, 0.012));
                let (result, comment) = if req_failed {
                    (
                        false,
                        format!(
                            "One or more requisite failed: {}.{}",
                            d.sls,
                            d.req.unwrap_or("")
                        ),
                    )
                } else {
                    (
                        true,
                        "State was not run because none of the onchanges reqs changed".to_string(),
                    )
                };
                total_ms += dur;
                this_ms = dur;
                if result {
                    n_ok += 1;
                } else {
                    n_fail += 1;
                    failed.push(d.id);
                }
                obj! {
                    "changes" => J::Obj(vec![]),
                    "result" => J::Bool(result),
                    "duration" => J::Float(dur),
                    "start_time" => s(start),
                    "comment" => s(comment),
                    "__state_ran__" => J::Bool(false),
                    "__run_num__" => J::Int(i as i64),
                    "__sls__" => s(d.sls),
                    "__id__" => s(d.id),
                    "name" => s(d.name),
                }
            } else {
                let fail = fail_id == Some(d.id);
                let change = restart
                    || d.onchanges.is_some()
                    || matches!(d.kind, Kind::Cmd(..))
                    || job.rollout.contains(&d.id)
                    || r.chance(0.01);
                let (result, changes, comment, dur) =
                    state_body(d, &minion.id, fail, change, job.test_mode, r);
                total_ms += dur;
                this_ms = dur;
                match result {
                    J::Bool(false) => {
                        n_fail += 1;
                        failed.push(d.id);
                    }
                    _ => n_ok += 1,
                }
                if matches!(&changes, J::Obj(c) if !c.is_empty()) && !job.test_mode {
                    changed.push(d.id);
                }
                let warnings = if d.id == "motd" && r.chance(0.05) {
                    Some(J::Arr(vec![s(
                        "Use of argument 'backup' is deprecated and will be removed in Salt 3009.",
                    )]))
                } else {
                    None
                };
                let mut st = if matches!(d.kind, Kind::File(..)) {
                    obj! {
                        "changes" => changes,
                        "comment" => s(comment),
                        "name" => s(d.name),
                        "result" => result,
                    }
                } else {
                    obj! {
                        "name" => s(d.name),
                        "changes" => changes,
                        "result" => result,
                        "comment" => s(comment),
                    }
                };
                if let (Some(w), J::Obj(o)) = (warnings, &mut st) {
                    o.push(("warnings".into(), w));
                }
                if let J::Obj(o) = &mut st {
                    o.push(("__sls__".into(), s(d.sls)));
                    o.push(("__run_num__".into(), J::Int(i as i64)));
                    o.push(("start_time".into(), s(start)));
                    o.push(("duration".into(), J::Float(dur)));
                    o.push(("__id__".into(), s(d.id)));
                }
                st
            };
            t += (this_ms * 1000.0) as i64 + r.range(100.0, 2500.0) as i64;
            items.push((key, state));
        }
        let retcode = if n_fail > 0 { 2 } else { 0 };
        let counts = cfg
            .states_count
            .then(|| obj! {"succeeded" => J::Int(n_ok), "failed" => J::Int(n_fail)});
        (
            retcode,
            J::Obj(items),
            1.0 + total_ms / 1000.0 + r.range(0.2, 2.0),
            counts,
        )
    }
}

/// (result, changes, comment, duration ms) of a state that ran.
fn state_body(
    d: &StateDef,
    minion: &str,
    fail: bool,
    change: bool,
    test: bool,
    r: &mut Rng,
) -> (J, J, String, f64) {
    let none = || J::Obj(vec![]);
    let ok = J::Bool(true);
    match d.kind {
        Kind::Pkg(pkgs) => {
            if fail {
                let c = format!("Problem encountered installing package(s). Additional info follows:\n\nerrors:\n    - Running scope as unit: run-r{:x}.scope\n      E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process {} (apt-get)", r.next_u64() & 0xffff_ffff, 1000 + r.below(30000));
                (J::Bool(false), none(), c, ms(r.range(800.0, 4000.0)))
            } else if change {
                let k = 1 + r.below(pkgs.len().min(2));
                let start = r.below(pkgs.len());
                let chosen: Vec<_> = (0..k).map(|i| pkgs[(start + i) % pkgs.len()]).collect();
                let names: Vec<&str> = chosen.iter().map(|p| p.0).collect();
                if test {
                    (
                        J::Null,
                        none(),
                        format!(
                            "The following packages would be installed/updated: {}",
                            names.join(", ")
                        ),
                        ms(r.range(20.0, 80.0)),
                    )
                } else {
                    let ch = J::Obj(
                        chosen
                            .iter()
                            .map(|(n, o, nw)| {
                                (n.to_string(), obj! {"new" => s(*nw), "old" => s(*o)})
                            })
                            .collect(),
                    );
                    (
                        ok,
                        ch,
                        format!(
                            "The following packages were installed/updated: {}",
                            names.join(", ")
                        ),
                        ms(r.range(2000.0, 25000.0)),
                    )
                }
            } else {
                (
                    ok,
                    none(),
                    "All specified packages are already installed".into(),
                    ms(r.range(15.0, 60.0)),
                )
            }
        }
        Kind::File(old, new) => {
            let path = d.name;
            if fail {
                (
                    J::Bool(false),
                    none(),
                    format!(
                        "Unable to manage file: Jinja variable 'dict object' has no attribute '{}'",
                        d.sls.replace('.', "_")
                    ),
                    ms(r.range(5.0, 30.0)),
                )
            } else if change {
                let (o, n) = (
                    old.replace("{minion}", minion),
                    new.replace("{minion}", minion),
                );
                let diff = format!("--- \n+++ \n@@ -1,3 +1,3 @@\n # managed by salt for {minion}\n-{o}\n+{n}\n # end\n");
                if test {
                    (J::Null, obj! {"diff" => s(diff)}, format!("The file {path} is set to be changed\nNote: No changes made, actual changes may\nbe different due to other states."), ms(r.range(5.0, 40.0)))
                } else {
                    (
                        ok,
                        obj! {"diff" => s(diff)},
                        format!("File {path} updated"),
                        ms(r.range(8.0, 60.0)),
                    )
                }
            } else {
                (
                    ok,
                    none(),
                    format!("File {path} is in the correct state"),
                    ms(r.range(3.0, 25.0)),
                )
            }
        }
        Kind::Directory => {
            if change && !test {
                (
                    ok,
                    J::Obj(vec![(d.name.to_string(), s("New Dir"))]),
                    format!("Directory {} updated", d.name),
                    ms(r.range(2.0, 8.0)),
                )
            } else {
                (
                    ok,
                    none(),
                    format!("The directory {} is in the correct state", d.name),
                    ms(r.range(1.0, 5.0)),
                )
            }
        }
        Kind::Service => {
            if fail {
                (J::Bool(false), none(), format!("Job for {0}.service failed because the control process exited with error code.\nSee \"systemctl status {0}.service\" and \"journalctl -xeu {0}.service\" for details.", d.name), ms(r.range(200.0, 3000.0)))
            } else if change && test {
                (
                    J::Null,
                    none(),
                    "Service is set to be restarted".into(),
                    ms(r.range(10.0, 40.0)),
                )
            } else if change {
                (
                    ok,
                    J::Obj(vec![(d.name.to_string(), J::Bool(true))]),
                    "Service restarted".into(),
                    ms(r.range(300.0, 3000.0)),
                )
            } else {
                (
                    ok,
                    none(),
                    format!("The service {} is already running", d.name),
                    ms(r.range(15.0, 60.0)),
                )
            }
        }
        Kind::User => {
            if change && !test {
                (
                    ok,
                    obj! {"groups" => J::Arr(vec![s("deploy"), s("docker")])},
                    format!("Updated user {}", d.name),
                    ms(r.range(20.0, 80.0)),
                )
            } else {
                (
                    ok,
                    none(),
                    format!("User {} is present and up to date", d.name),
                    ms(r.range(5.0, 30.0)),
                )
            }
        }
        Kind::Cmd(stdout, code, stderr) => {
            if test {
                return (
                    J::Null,
                    obj! {"cmd" => s(d.name)},
                    format!("Command \"{}\" would have been executed", d.name),
                    ms(r.range(0.3, 1.0)),
                );
            }
            let pid = J::Int(1000 + r.below(4_000_000) as i64);
            let (result, rc, out, err) = if fail {
                (false, code, "", stderr)
            } else {
                (true, 0, stdout, "")
            };
            let ch = obj! {"pid" => pid, "retcode" => J::Int(rc), "stdout" => s(out), "stderr" => s(err)};
            (
                J::Bool(result),
                ch,
                format!("Command \"{}\" run", d.name),
                ms(r.range(5.0, 900.0)),
            )
        }
        Kind::Test => (ok, none(), "Success!".into(), ms(r.range(0.1, 0.5))),
    }
}

fn cmd_stdout(cmd: &str, m: &Minion, r: &mut Rng) -> String {
    match cmd {
        "uptime" => format!(
            " {:02}:{:02}:{:02} up {} days, {:2}:{:02},  0 users,  load average: {:.2}, {:.2}, {:.2}",
            r.below(24), r.below(60), r.below(60), 1 + r.below(300), r.below(24), r.below(60),
            r.range(0.0, 4.0), r.range(0.0, 3.0), r.range(0.0, 2.0)
        ),
        "df -h /" => {
            let used = 5 + r.below(30);
            format!("Filesystem      Size  Used Avail Use% Mounted on\n/dev/sda1        40G   {used}G   {}G  {}% /", 40 - used - 2, used * 100 / 40)
        }
        "systemctl is-active nginx" => "active".into(),
        "id -un" => "root".into(),
        "cat /etc/debian_version" => "12.8".into(),
        "hostname -f" => m.id.clone(),
        "grep -c ERROR /var/log/app/app.log" => format!("{}", 1 + r.below(40)),
        "tail -n 3 /var/log/syslog" => {
            let h = m.id.split('.').next().unwrap_or(&m.id).to_string();
            format!("2026-11-29T17:05:01.000000+00:00 {h} CRON[{0}]: (root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)\n2026-11-29T17:05:07.171524+00:00 {h} salt-minion[{1}]: [INFO    ] Executing command 'tail' in directory '/root'\n2026-11-29T17:05:07.201112+00:00 {h} systemd[1]: Started session-{2}.scope - Session {2} of User root.", 10000 + r.below(50000), 500 + r.below(2000), r.below(900))
        }
        "curl -fsS http://localhost/healthz" => "ok".into(),
        _ => String::new(),
    }
}

const LIST_JOBS_TRACEBACK: &str = "Exception occurred in runner jobs.list_jobs: Traceback (most recent call last):\n  File \"/opt/saltstack/salt/lib/python3.10/site-packages/salt/client/mixins.py\", line 387, in low\n    data[\"return\"] = func(*args, **kwargs)\n                     ^^^^^^^^^^^^^^^^^^^^^\n  File \"/opt/saltstack/salt/lib/python3.10/site-packages/salt/loader/lazy.py\", line 177, in __call__\n    ret = self.loader.run(run_func, *args, **kwargs)\n          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/opt/saltstack/salt/lib/python3.10/site-packages/salt/runners/jobs.py\", line 313, in list_jobs\n    ret = mminion.returners[f\"{returner}.get_jids\"]()\n          ~~~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/opt/saltstack/salt/lib/python3.10/site-packages/salt/utils/lazy.py\", line 104, in __getitem__\n    raise KeyError(key)\nKeyError: 'elasticsearch.get_jids'\n";

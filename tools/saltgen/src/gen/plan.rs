//! Planning: which jobs run when, on which minions, with what; the
//! normal mix, in time order, and the special jobs asked for.

use super::funs::{COMMAND_WEIGHTS, FUN_WEIGHTS, GRAINS_SETS, USER_WEIGHTS};
use super::noise::{noise_units, plan_noise, Episode};
use super::special::{diff_state, special_job, special_start_us, wide_fleet};
use super::{return_index, Config, Fleet, Fun, Rng, Special, COMMANDS, FUNS, USERS};
use crate::json::{s, J};
use crate::obj;
use crate::states::ROLES;
use saltscope_core::time::jid;
use std::ops::Range;

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
    /// one of the big job shapes made on request, or None for the normal mix
    pub special: Option<Special>,
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
    /// the normal mix, in time order
    pub jobs: Vec<Job>,
    /// the big job shapes asked for, in `Special::ALL` order
    pub specials: Vec<Job>,
    /// with `--events`: the fleet's noise on the event bus, and its work units
    pub noise: Vec<Episode>,
    pub noise_units: Vec<Range<usize>>,
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
pub(super) const SLS_ARGS: &[&str] = &["", "", "", "common.ssh", "common.packages", "common.time"];

impl Plan {
    pub fn new(cfg: Config) -> Plan {
        let mut rng = Rng::new(cfg.seed);
        let (fleet, wide) = wide_fleet(&cfg, &mut rng);
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
        // The special jobs' start times are their jids: no normal job may share one.
        let taken: Vec<i64> = Special::ALL
            .iter()
            .filter(|k| k.wanted(&cfg))
            .map(|k| special_start_us(&cfg, *k))
            .collect();
        for i in 0..times.len() {
            if i > 0 && times[i] <= times[i - 1] {
                times[i] = times[i - 1] + 1;
            }
            while taken.contains(&times[i]) {
                times[i] += 1;
            }
        }
        for (job, t) in jobs.iter_mut().zip(times) {
            job.start_us = t;
        }
        let specials = Special::ALL
            .iter()
            .filter(|k| k.wanted(&cfg))
            .map(|k| special_job(&cfg, &fleet, wide.as_ref(), *k))
            .collect();
        let mut plan = Plan {
            cfg,
            fleet,
            jobs,
            specials,
            noise: vec![],
            noise_units: vec![],
        };
        if plan.cfg.events > 0 {
            // The noise fills up to --events what the jobs' events leave.
            let want = plan.cfg.events.saturating_sub(plan.job_event_docs());
            plan.noise = plan_noise(&plan.cfg, &plan.fleet, want);
            plan.noise_units = noise_units(&plan.noise);
        }
        plan
    }

    /// Return documents of the whole load: the normal mix and the special jobs.
    pub fn return_docs(&self) -> u64 {
        self.jobs
            .iter()
            .chain(&self.specials)
            .map(|j| j.return_docs(&self.cfg) as u64)
            .sum()
    }

    /// The special jobs, for the summary and the marker document:
    /// `{<name>: {jid, fun, index, minions, returns, missing, …}}`.
    pub fn specials_summary(&self) -> J {
        let cfg = &self.cfg;
        let mut items = Vec::new();
        for job in &self.specials {
            let Some(kind) = job.special else { continue };
            let mut o = obj! {
                "jid" => s(jid(job.start_us)),
                "fun" => s(job.fun.name()),
                "index" => s(return_index(&cfg.prefix, job.fun)),
                "minions" => J::Int(job.minions.len() as i64),
                "returns" => J::Int(job.returning.len() as i64),
                "missing" => J::Int((job.minions.len() - job.returning.len()) as i64),
            };
            if let [m] = job.returning[..] {
                o.set("minion", s(&self.fleet.minions[m as usize].id));
            }
            match kind {
                Special::States => {
                    o.set("states", J::Int(cfg.states_per_return as i64));
                    if let Some((key, id, bytes)) =
                        crate::big::long_comment(job.seed, cfg.states_per_return)
                    {
                        let c = obj! {"state" => s(key), "id" => s(id), "bytes" => J::Int(bytes as i64)};
                        o.set("long_comment", c);
                    }
                    if let Some((key, id, name)) =
                        crate::big::script_state(job.seed, cfg.states_per_return)
                    {
                        let c = obj! {"state" => s(key), "id" => s(id), "name" => s(name)};
                        o.set("script", c);
                    }
                }
                Special::OutputCmdRun | Special::OutputCmdRunAll => {
                    o.set("bytes", J::Int(cfg.output_bytes as i64))
                }
                Special::OutputFileFind => {
                    o.set("bytes", J::Int(cfg.output_bytes as i64));
                    let paths = crate::big::found_paths(cfg.output_bytes, job.seed).len();
                    o.set("entries", J::Int(paths as i64));
                }
                Special::OutputDiff => {
                    o.set("bytes", J::Int(cfg.output_bytes as i64));
                    let role = job
                        .returning
                        .first()
                        .map_or(0, |m| self.fleet.minions[*m as usize].role);
                    if let Some(d) = diff_state(role) {
                        let key = format!("{}_|-{}_|-{}_|-{}", d.module, d.id, d.name, d.fun);
                        o.set("state", s(key.replace('.', "_")));
                    }
                }
                Special::WideStateApply | Special::WideTestVersion => {
                    o.set("tgt", job.tgt.clone());
                    o.set("tgt_type", s(job.tgt_type));
                }
            }
            items.push((kind.name().to_string(), o));
        }
        J::Obj(items)
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
        special: None,
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

//! Documents: every job's return documents, its publish event and its
//! job-cache load, made one at a time as the returner would write them.

use super::events::{event_rng, MinionReturn};
use super::funs::{GRAINS_SETS, SYNC_KINDS, UPGRADES};
use super::{
    event_index, job_cache_index, mix, return_index, Fun, Job, Minion, Plan, Rng, Special, COMMANDS,
};
use crate::big;
use crate::json::{convert_keys, s, J};
use crate::obj;
use saltscope_core::time::{iso_utc, jid};

/// One document for the bulk API: the alias (or index) it goes to, an optional id, the body.
#[derive(Clone, Debug)]
pub struct Doc {
    pub index: String,
    pub id: Option<String>,
    pub body: J,
}

pub(super) fn uuid4(rng: &mut Rng) -> String {
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
        self.job_docs_to(j, &mut |d| out.push(d));
    }

    /// The documents of job `j`, one at a time, as they are made.
    pub fn job_docs_to(&self, j: usize, sink: &mut dyn FnMut(Doc)) {
        let prev = j.checked_sub(1).map(|p| &self.jobs[p]);
        self.docs_of(&self.jobs[j], prev, sink);
    }

    /// The documents of special job `k`, one at a time: a job on 2,000 minions
    /// is never in memory whole.
    pub fn special_docs_to(&self, k: usize, sink: &mut dyn FnMut(Doc)) {
        self.docs_of(&self.specials[k], None, sink);
    }

    /// Documents of the job cache: one per job with a publish load.
    pub fn job_cache_docs(&self) -> u64 {
        let jobs = self.jobs.iter().chain(&self.specials);
        jobs.filter(|j| j.has_publish_docs()).count() as u64
    }

    /// `prev`: the job before, whose jid a `jobs.lookup_jid` runner looks up.
    fn docs_of(&self, job: &Job, prev: Option<&Job>, sink: &mut dyn FnMut(Doc)) {
        let cfg = &self.cfg;
        let job_jid = jid(job.start_us);
        let mut rng = Rng::new(job.seed);
        let fun = job.fun.name();
        let index = return_index(&cfg.prefix, job.fun);
        // --events: the job's events besides `new`, each from its own stream
        let events = cfg.events > 0;
        let mut ev_rng = event_rng(job, 0);

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
                    let other = prev.map_or_else(|| job_jid.clone(), |p| jid(p.start_us));
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
            let run_events = events.then(|| self.runner_events(&job_jid, &data, ts, &mut ev_rng));
            sink(Doc {
                index,
                id: None,
                body: return_doc(ts, &cfg.master, fun, &job_jid, 1, J::Obj(vec![]), data),
            });
            run_events.into_iter().flatten().for_each(&mut *sink);
            return;
        }

        // Returns.
        let mut last_ret: Option<(i64, u32)> = None;
        for &m in &job.returning {
            let minion = &self.fleet.minions[m as usize];
            let mut r = Rng::new(mix(job.seed, m as u64 + 1));
            let (retcode, data, latency, counts) = match job.fun {
                Fun::StateApply | Fun::StateHighstate => self.state_return(job, minion, &mut r),
                Fun::CmdRun if job.special == Some(Special::OutputCmdRun) => {
                    let out =
                        big::command_output(cfg.output_bytes, &minion.id, job.start_us, job.seed);
                    (0, s(out), r.range(2.0, 6.0), None)
                }
                Fun::CmdRunAll => {
                    let out =
                        big::command_output(cfg.output_bytes, &minion.id, job.start_us, job.seed);
                    let pid = 1000 + r.below(60_000) as i64;
                    let data = obj! {
                        "pid" => J::Int(pid),
                        "retcode" => J::Int(0),
                        "stdout" => s(out),
                        "stderr" => s(""),
                    };
                    (0, data, r.range(2.0, 6.0), None)
                }
                Fun::FileFind => {
                    let paths = big::found_paths(cfg.output_bytes, job.seed);
                    (
                        0,
                        J::Arr(paths.into_iter().map(s).collect()),
                        r.range(1.0, 4.0),
                        None,
                    )
                }
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
            if events {
                let ret = MinionReturn {
                    minion: &minion.id,
                    retcode,
                    // test.ping's return is `true` (never written to a return document)
                    data: match job.fun {
                        Fun::TestPing => J::Bool(true),
                        _ => data.clone(),
                    },
                    ts,
                };
                let mut r = event_rng(job, m as u64 + 1);
                sink(self.ret_event(job, &job_jid, ret, &mut r));
            }
            if job.fun == Fun::TestPing {
                continue; // functions_blacklist: no return document
            }
            if job.render_error && cfg.states_count {
                continue; // the returner raises counting a non-dict return: nothing written
            }
            let counts = counts.unwrap_or(J::Obj(vec![]));
            sink(Doc {
                index: index.clone(),
                id: None,
                body: return_doc(ts, &minion.id, fun, &job_jid, retcode, counts, data),
            });
        }

        // With --events, the event cache has the project's mappings (arg kept
        // unindexed): a test=True job's publish events are stored too.
        if !job.has_publish_docs() && !events {
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
        sink(Doc {
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
        if events {
            sink(self.publish_event(job, &job_jid, stamp, &mut ev_rng));
        }
        if !job.has_publish_docs() {
            return; // test=True: the job cache's dynamic mapping refuses its load
        }
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
        sink(Doc {
            index: job_cache_index(&cfg.prefix),
            id: Some(job_jid.clone()),
            body: obj! {"jid" => s(&job_jid), "load" => load},
        });
        if cfg.ret_events && !events && job.fun == Fun::TestPing {
            for &m in &job.returning {
                let minion = &self.fleet.minions[m as usize];
                let mut r = Rng::new(mix(job.seed, m as u64 + 1));
                let ts = job.start_us + (r.range(0.1, 1.5) * 1e6) as i64;
                sink(Doc {
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

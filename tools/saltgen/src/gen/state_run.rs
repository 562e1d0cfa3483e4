//! The return of a state run of the normal mix: one state result per
//! state of the minion's role, with requisites, rollouts and failures.

use super::plan::SLS_ARGS;
use super::special::diff_state;
use super::{ms, Fun, Job, Minion, Plan, Rng, Special};
use crate::big;
use crate::json::{s, J};
use crate::obj;
use crate::states::{run_list, Kind, StateDef};
use saltscope_core::time::time_of_day;

impl Plan {
    /// (retcode, data before key rewriting, latency s, counts)
    pub(super) fn state_return(
        &self,
        job: &Job,
        minion: &Minion,
        r: &mut Rng,
    ) -> (i64, J, f64, Option<J>) {
        let cfg = &self.cfg;
        if job.special == Some(Special::States) {
            let mut text = String::with_capacity(cfg.states_per_return * 480);
            let start = job.start_us + r.range(300_000.0, 1_500_000.0) as i64;
            let run = big::write_states(
                cfg.states_per_return,
                job.seed,
                &minion.id,
                start,
                &mut text,
            );
            let counts = cfg.states_count.then(
                || obj! {"succeeded" => J::Int(run.succeeded), "failed" => J::Int(run.failed)},
            );
            let latency = (run.end_us - job.start_us) as f64 / 1e6 + r.range(0.2, 2.0);
            return (
                if run.failed > 0 { 2 } else { 0 },
                J::Raw(text),
                latency,
                counts,
            );
        }
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
        // --output-bytes: this file state changes, with a long diff.
        let diff_id = (job.special == Some(Special::OutputDiff))
            .then(|| diff_state(minion.role).map(|d| d.id))
            .flatten();
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
                let fail = fail_id == Some(d.id) && diff_id != Some(d.id);
                let change = diff_id == Some(d.id)
                    || restart
                    || d.onchanges.is_some()
                    || matches!(d.kind, Kind::Cmd(..))
                    || job.rollout.contains(&d.id)
                    || r.chance(0.01);
                let (result, mut changes, comment, dur) =
                    state_body(d, &minion.id, fail, change, job.test_mode, r);
                if diff_id == Some(d.id) {
                    let diff = big::long_diff(cfg.output_bytes, &minion.id, job.seed);
                    changes = obj! {"diff" => s(diff)};
                }
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

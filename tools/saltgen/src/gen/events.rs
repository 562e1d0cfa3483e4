//! The master's event bus around the jobs (`--events`): what `event_return:
//! elasticsearch` writes into `<prefix>-master-event-cache` for each job
//! besides its `salt/job/<jid>/new` event — `salt/job/<jid>/publish`, one
//! `salt/job/<jid>/ret/<minion>` per minion that returned, and a runner's
//! `salt/run/<jid>/new` and `salt/run/<jid>/ret`. The fleet's own noise is in
//! [`super::noise`].
//!
//! Shapes, from Salt 3008.5 and the real documents in tests/fixtures/:
//! - `ret`: the minion's return load as the master fires it
//!   (`salt.utils.job.store_job`) and then saves it in the job cache, so it is
//!   field for field a job-cache `_return` load (`job_cache.json`): `cmd, id,
//!   success, return, retcode, jid, fun, fun_args, user, _stamp, ts`, plus
//!   `out` where the function names an outputter (`highstate` for state
//!   functions, `nested` for `grains.item`). Its `return` is the function's
//!   whole return with its keys as Salt made them: only return documents get
//!   their dots rewritten. The event is fired before the returner runs, so its
//!   `_stamp` is a few ms before the return document's `@timestamp`.
//! - `publish`: `missing_minion_events.json`: `fun, arg, tgt, jid, ret,
//!   tgt_type, user, _stamp`, about 100 ms after `new`.
//! - `salt/run/<jid>/new` and `/ret`: `salt.client.mixins.low` fires one data
//!   dict twice: `{fun, jid, user, fun_args, _stamp}`, then, with the
//!   return, `success` (and `retcode` 1 when it raised) added and `_stamp`
//!   renewed; the runner's return document (`runner_return.json`) is written
//!   between the two with the first `_stamp`.
//!
//! Every stream here is drawn apart from the returns' streams: turning
//! `--events` on changes no return document.

use super::docs::uuid4;
use super::{event_index, mix, Doc, Fun, Job, Plan, Rng};
use crate::json::{s, J};
use crate::obj;
use saltscope_core::time::iso_utc;

/// Where the event streams of a job start: apart from its returns' streams.
const EVENT_STREAM: u64 = 0x0e7e_47a1_b05c_0001;

/// A job's event stream (`minion` 0: the job's own events, else minion + 1).
pub(super) fn event_rng(job: &Job, minion: u64) -> Rng {
    Rng::new(mix(job.seed ^ EVENT_STREAM, minion))
}

/// One document of the event cache: `{tag, data}` under a uuid4, as the
/// returner's `event_return` posts it.
pub(crate) fn event_doc(prefix: &str, tag: String, data: J, r: &mut Rng) -> Doc {
    Doc {
        index: event_index(prefix),
        id: Some(uuid4(r)),
        body: obj! {"tag" => s(tag), "data" => data},
    }
}

/// The outputter a function names (`__outputter__`), which the minion puts in
/// its return load as `out`.
fn outputter(fun: Fun) -> Option<&'static str> {
    match fun {
        Fun::StateApply | Fun::StateHighstate => Some("highstate"),
        Fun::GrainsItem => Some("nested"),
        _ => None,
    }
}

/// What a minion's return is made of, for its `ret` event.
pub(super) struct MinionReturn<'a> {
    pub minion: &'a str,
    pub retcode: i64,
    /// the function's return, keys as Salt made them
    pub data: J,
    /// the return document's `@timestamp` (when the returner ran), µs
    pub ts: i64,
}

impl Plan {
    /// `salt/job/<jid>/ret/<minion>`.
    pub(super) fn ret_event(
        &self,
        job: &Job,
        job_jid: &str,
        ret: MinionReturn,
        r: &mut Rng,
    ) -> Doc {
        // fired, then the job cache's save_load (one request), then the returner
        let stamp = ret.ts - r.range(2_000.0, 25_000.0) as i64;
        // the minion's request channel stamps the load (int seconds) as it sends
        let sent = stamp - r.range(500.0, 8_000.0) as i64;
        let mut data = obj! {
            "cmd" => s("_return"),
            "id" => s(ret.minion),
            "success" => J::Bool(ret.retcode == 0),
            "return" => ret.data,
            "retcode" => J::Int(ret.retcode),
            "jid" => s(job_jid),
            "fun" => s(job.fun.name()),
            "fun_args" => J::Arr(job.arg.clone()),
            "user" => s(job.user),
            "_stamp" => s(iso_utc(stamp)),
        };
        if let Some(out) = outputter(job.fun) {
            data.set("out", s(out));
        }
        data.set("ts", J::Int(sent.div_euclid(1_000_000)));
        let tag = format!("salt/job/{job_jid}/ret/{}", ret.minion);
        event_doc(&self.cfg.prefix, tag, data, r)
    }

    /// `salt/job/<jid>/publish`, fired after `new` (`new_stamp`, µs).
    pub(super) fn publish_event(
        &self,
        job: &Job,
        job_jid: &str,
        new_stamp: i64,
        r: &mut Rng,
    ) -> Doc {
        let stamp = new_stamp + r.range(60_000.0, 180_000.0) as i64;
        let data = obj! {
            "fun" => s(job.fun.name()),
            "arg" => J::Arr(job.arg.clone()),
            "tgt" => job.tgt.clone(),
            "jid" => s(job_jid),
            "ret" => s(""),
            "tgt_type" => s(job.tgt_type),
            "user" => s(job.user),
            "_stamp" => s(iso_utc(stamp)),
        };
        event_doc(
            &self.cfg.prefix,
            format!("salt/job/{job_jid}/publish"),
            data,
            r,
        )
    }

    /// `salt/run/<jid>/new` and `salt/run/<jid>/ret` of a runner job whose
    /// return document holds `data` (with the `new` event's `_stamp`) and was
    /// written at `ts` (µs).
    pub(super) fn runner_events(&self, job_jid: &str, data: &J, ts: i64, r: &mut Rng) -> [Doc; 2] {
        let J::Obj(items) = data else {
            unreachable!("a runner's data is an object")
        };
        let before_return: Vec<(String, J)> = items
            .iter()
            .take_while(|(k, _)| k != "return")
            .cloned()
            .collect();
        let new = event_doc(
            &self.cfg.prefix,
            format!("salt/run/{job_jid}/new"),
            J::Obj(before_return),
            r,
        );
        let mut done = data.clone();
        done.set("_stamp", s(iso_utc(ts + r.range(300.0, 4_000.0) as i64)));
        let ret = event_doc(&self.cfg.prefix, format!("salt/run/{job_jid}/ret"), done, r);
        [new, ret]
    }

    /// Documents of the event cache that belong to jobs: with `--events`,
    /// each minion job's `new`, `publish` and one `ret` per returning minion,
    /// and each runner job's `new` and `ret`; without it, the `new` events
    /// (and `--ret-events`' test.ping `ret` events).
    pub fn job_event_docs(&self) -> u64 {
        let cfg = &self.cfg;
        self.jobs
            .iter()
            .chain(&self.specials)
            .map(|j| {
                if cfg.events == 0 {
                    let rets = cfg.ret_events && j.fun == Fun::TestPing;
                    u64::from(j.has_publish_docs())
                        * (1 + if rets { j.returning.len() as u64 } else { 0 })
                } else if j.fun.is_runner() {
                    2
                } else {
                    2 + j.returning.len() as u64
                }
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Config;
    use super::*;
    use std::collections::BTreeMap;

    /// The keys of an object, in order.
    fn keys(v: &J) -> Vec<&str> {
        match v {
            J::Obj(items) => items.iter().map(|(k, _)| k.as_str()).collect(),
            _ => vec![],
        }
    }

    #[test]
    fn events_list_their_fields_in_salts_order() {
        let plan = Plan::new(Config {
            returns: 2_000,
            minions: 100,
            seed: 4,
            events: 5_000,
            ..Config::default()
        });
        // the data keys of each tag family, as first seen (and checked the same everywhere)
        let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut check = |d: Doc| {
            if !d.index.ends_with("-master-event-cache") {
                return;
            }
            let J::Obj(items) = &d.body else { return };
            let [(tag_key, J::Str(tag)), (data_key, data)] = &items[..] else {
                panic!("{{tag, data}}: {}", d.body.to_json())
            };
            assert_eq!((tag_key.as_str(), data_key.as_str()), ("tag", "data"));
            let p: Vec<&str> = tag.split('/').collect();
            let family = match p.as_slice() {
                ["salt", "job", _, "ret", _] => {
                    let fun = match &data {
                        J::Obj(o) => o.iter().find(|(k, _)| k == "fun").map(|(_, v)| v.to_json()),
                        _ => None,
                    };
                    format!("ret {}", fun.unwrap_or_default())
                }
                ["salt", kind, _, what] => format!("salt/{kind}/*/{what}"),
                _ => tag.clone(),
            };
            let ks: Vec<String> = keys(data).iter().map(|k| k.to_string()).collect();
            let first = seen.entry(family.clone()).or_insert_with(|| ks.clone());
            if !family.starts_with("salt/key") && !family.starts_with("salt/run/*/ret") {
                assert_eq!(*first, ks, "{family}");
            }
        };
        for j in 0..plan.jobs.len() {
            plan.job_docs_to(j, &mut check);
        }
        for u in 0..plan.noise_units.len() {
            plan.noise_docs_to(u, &mut check);
        }
        let want = |k: &str| {
            seen.get(k)
                .unwrap_or_else(|| panic!("no {k}: {seen:?}"))
                .join(",")
        };
        // the job-cache `_return` load's order (job_cache.json), `out` before `ts`
        assert_eq!(
            want("ret \"test.ping\""),
            "cmd,id,success,return,retcode,jid,fun,fun_args,user,_stamp,ts"
        );
        assert_eq!(
            want("ret \"state.apply\""),
            "cmd,id,success,return,retcode,jid,fun,fun_args,user,_stamp,out,ts"
        );
        assert_eq!(
            want("salt/job/*/new"),
            "jid,tgt_type,tgt,user,fun,arg,minions,missing,_stamp"
        );
        // missing_minion_events.json
        assert_eq!(
            want("salt/job/*/publish"),
            "fun,arg,tgt,jid,ret,tgt_type,user,_stamp"
        );
        assert_eq!(want("salt/run/*/new"), "fun,jid,user,fun_args,_stamp");
        // Salt 3008.5: master.py's eload, minion.py's _fire_master_prepare + the request channel's ts
        assert_eq!(want("salt/auth"), "result,act,id,pub,_stamp");
        assert_eq!(want("minion_start"), "id,cmd,pretag,data,tag,_stamp,ts");
        assert_eq!(
            want("salt/minion/*/start"),
            "id,cmd,pretag,data,tag,_stamp,ts"
        );
    }
}

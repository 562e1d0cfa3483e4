//! The marker document `saltscope-gen-meta/<prefix>`: what was loaded, for
//! `--skip-if-loaded`, and the summary line printed at the end.

use crate::gen::Plan;

pub const MARKER_INDEX: &str = "saltscope-gen-meta";

/// What `--skip-if-loaded` compares, with the value a marker written before
/// the key existed stands for (the option off).
pub const MARKER_KEYS: &[(&str, Option<serde_json::Value>)] = &[
    ("prefix", None),
    ("seed", None),
    ("returns", None),
    ("minions", None),
    ("days", None),
    ("states_count", None),
    ("extra_states", None),
    ("ret_events", None),
    ("generator", None),
    ("states_per_return", Some(serde_json::Value::Null)),
    ("minions_per_job", Some(serde_json::Value::Null)),
    ("minions_per_job_fun", Some(serde_json::Value::Null)),
    ("output_bytes", Some(serde_json::Value::Null)),
    ("events", Some(serde_json::Value::Null)),
];

pub fn marker_doc(plan: &Plan, docs: u64) -> serde_json::Value {
    let cfg = &plan.cfg;
    // An option that is off is null: the same as in a marker older than the option.
    let on = |n: usize| (n > 0).then_some(n);
    let specials: serde_json::Value =
        serde_json::from_str(&plan.specials_summary().to_json()).unwrap_or_default();
    serde_json::json!({
        "prefix": cfg.prefix, "seed": cfg.seed, "returns": cfg.returns, "minions": cfg.minions,
        "days": cfg.days, "states_count": cfg.states_count, "extra_states": cfg.extra_states,
        "ret_events": cfg.ret_events,
        "states_per_return": on(cfg.states_per_return),
        "minions_per_job": on(cfg.minions_per_job),
        "minions_per_job_fun": on(cfg.minions_per_job).map(|_| {
            cfg.wide_funs.iter().map(|f| f.name()).collect::<Vec<_>>().join(",")
        }),
        "output_bytes": on(cfg.output_bytes),
        "events": (cfg.events > 0).then_some(cfg.events),
        "event_docs": plan.event_docs(),
        "jobs": plan.jobs.len() + plan.specials.len(), "return_docs": plan.return_docs(),
        "docs": docs, "special_jobs": specials,
        "end": saltscope_core::time::iso_utc(cfg.end_us),
        "generator": env!("CARGO_PKG_VERSION"),
    })
}

/// The last line of stdout: where the special jobs are, for tests and benchmarks.
pub fn print_summary(prefix: &str, seed: u64, specials: &serde_json::Value) {
    println!(
        "{}",
        serde_json::json!({"prefix": prefix, "seed": seed, "special_jobs": specials})
    );
}

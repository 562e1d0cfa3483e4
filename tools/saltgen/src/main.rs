//! saltscope-gen: bulk-load synthetic Salt returns into Elasticsearch/OpenSearch.
//! See `saltscope-gen --help`.

use saltscope_gen::gen::{event_index, job_cache_index, return_index, Config, Doc, Plan, FUNS};
use saltscope_gen::time::parse_end;
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const USAGE: &str = "\
saltscope-gen: load synthetic Salt returns shaped exactly like the elasticsearch returner's

usage: saltscope-gen [options]
  --url URL            engine base URL (default http://127.0.0.1:9200)
  --returns N          return documents to write (default 1000000)
  --prefix P           index prefix (default saltgen): <P>-<fun_>, <P>-master-job-cache,
                       <P>-master-event-cache
  --days D             spread jobs over the last D days (default 30)
  --end TIME           end of the span: unix seconds or 2026-12-01T00:00:00 (default now)
  --minions N          fleet size (default 2000)
  --seed S             PRNG seed (default 1); same seed, same documents
  --batch N            documents per bulk request (default 5000)
  --threads N          generator+loader threads (default 2)
  --master ID          runner returns' minion (default salt01_master)
  --states-count       the returner's states_count option: counts {succeeded, failed}
  --extra-states N     add N (0..12) padding states to every state run (default 0)
  --ret-events         also write salt/job/<jid>/ret/<minion> events (test.ping jobs)
  --replace            delete existing <prefix>-* indices first
  --skip-if-loaded     exit 0 without loading when the marker says the same set is loaded
  --keep-refresh       don't turn index refresh off during the load
  --dry-run --out F    write the bulk NDJSON to F ('-' = stdout) instead of loading
";

struct Opts {
    url: String,
    cfg: Config,
    batch: usize,
    threads: usize,
    replace: bool,
    skip_if_loaded: bool,
    keep_refresh: bool,
    dry_run: bool,
    out: Option<String>,
}

fn parse_args() -> Result<Opts, String> {
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    let mut o = Opts {
        url: "http://127.0.0.1:9200".into(),
        cfg: Config {
            returns: 1_000_000,
            end_us: now_us,
            ..Config::default()
        },
        batch: 5000,
        threads: 2,
        replace: false,
        skip_if_loaded: false,
        keep_refresh: false,
        dry_run: false,
        out: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| format!("{a} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|_| format!("bad number '{v}'"));
        match a.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            "--url" => o.url = val()?.trim_end_matches('/').to_string(),
            "--returns" => o.cfg.returns = num(val()?)?,
            "--prefix" => o.cfg.prefix = val()?,
            "--days" => o.cfg.days = val()?.parse().map_err(|_| "bad --days")?,
            "--end" => {
                let v = val()?;
                o.cfg.end_us = parse_end(&v).ok_or(format!("bad --end '{v}'"))?
            }
            "--minions" => o.cfg.minions = num(val()?)? as usize,
            "--seed" => o.cfg.seed = num(val()?)?,
            "--batch" => o.batch = num(val()?)?.max(1) as usize,
            "--threads" => o.threads = num(val()?)?.max(1) as usize,
            "--master" => o.cfg.master = val()?,
            "--states-count" => o.cfg.states_count = true,
            "--extra-states" => o.cfg.extra_states = (num(val()?)? as usize).min(12),
            "--ret-events" => o.cfg.ret_events = true,
            "--replace" => o.replace = true,
            "--skip-if-loaded" => o.skip_if_loaded = true,
            "--keep-refresh" => o.keep_refresh = true,
            "--dry-run" => o.dry_run = true,
            "--out" => o.out = Some(val()?),
            _ => return Err(format!("unknown option '{a}'\n\n{USAGE}")),
        }
    }
    if o.dry_run && o.out.is_none() {
        return Err("--dry-run needs --out FILE (or --out -)".into());
    }
    if o.cfg.prefix.is_empty() || o.cfg.prefix.contains(['*', ',', ' ', '/']) {
        return Err("bad --prefix".into());
    }
    Ok(o)
}

// ---- HTTP -------------------------------------------------------------------

struct Http {
    agent: ureq::Agent,
    base: String,
}

impl Http {
    fn new(base: &str) -> Http {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(600)))
            .build()
            .into();
        Http {
            agent,
            base: base.to_string(),
        }
    }
    fn req(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
    ) -> Result<(u16, String), String> {
        let url = format!("{}{}", self.base, path);
        let res = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("DELETE", _) => self.agent.delete(&url).call(),
            ("PUT", Some((ct, b))) => self.agent.put(&url).header("Content-Type", ct).send(b),
            ("POST", Some((ct, b))) => self.agent.post(&url).header("Content-Type", ct).send(b),
            ("POST", None) => self.agent.post(&url).send_empty(),
            _ => self.agent.put(&url).send_empty(),
        };
        let mut resp = res.map_err(|e| format!("{method} {url}: {e}"))?;
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .with_config()
            .limit(1 << 30)
            .read_to_string()
            .map_err(|e| format!("{method} {url}: reading the answer: {e}"))?;
        Ok((status, text))
    }
    fn json(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> Result<(u16, serde_json::Value), String> {
        let (st, text) = self.req(
            method,
            path,
            body.map(|b| ("application/json", b.as_bytes())),
        )?;
        let v = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
        Ok((st, v))
    }
    fn ok(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> Result<serde_json::Value, String> {
        let (st, v) = self.json(method, path, body)?;
        if !(200..300).contains(&st) {
            return Err(format!(
                "{method} {path}: HTTP {st}: {}",
                trunc(&v.to_string(), 600)
            ));
        }
        Ok(v)
    }
}

fn trunc(s: &str, n: usize) -> String {
    if s.len() <= n {
        s.to_string()
    } else {
        let mut end = n;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    }
}

const MARKER_INDEX: &str = "saltscope-gen-meta";

fn marker_doc(cfg: &Config, jobs: usize, docs: u64) -> serde_json::Value {
    serde_json::json!({
        "prefix": cfg.prefix, "seed": cfg.seed, "returns": cfg.returns, "minions": cfg.minions,
        "days": cfg.days, "states_count": cfg.states_count, "extra_states": cfg.extra_states,
        "ret_events": cfg.ret_events, "jobs": jobs, "docs": docs,
        "end": saltscope_gen::time::iso_utc(cfg.end_us),
        "generator": env!("CARGO_PKG_VERSION"),
    })
}

/// Indices `<prefix>-*` and their doc counts / store sizes.
fn cat_indices(http: &Http, prefix: &str) -> Result<Vec<(String, u64, u64)>, String> {
    let v = http.ok(
        "GET",
        &format!("/_cat/indices/{prefix}-*?format=json&bytes=b&h=index,docs.count,store.size"),
        None,
    )?;
    let mut out = Vec::new();
    for row in v.as_array().cloned().unwrap_or_default() {
        let g = |k: &str| {
            row.get(k)
                .and_then(|x| x.as_str())
                .unwrap_or("0")
                .to_string()
        };
        let name = g("index");
        if name.starts_with(&format!("{prefix}-")) {
            out.push((
                name,
                g("docs.count").parse().unwrap_or(0),
                g("store.size").parse().unwrap_or(0),
            ));
        }
    }
    out.sort();
    Ok(out)
}

// ---- main -------------------------------------------------------------------

#[derive(Default)]
struct Stats {
    docs: AtomicU64,
    returns: AtomicU64,
    bytes: AtomicU64,
    item_errors: AtomicU64,
    abort: AtomicBool,
    errors: Mutex<Vec<String>>,
    per_index: Mutex<BTreeMap<String, u64>>,
}

impl Stats {
    fn error(&self, e: String) {
        let mut v = self.errors.lock().unwrap();
        if v.len() < 10 {
            v.push(e);
        }
    }
}

fn append_bulk(buf: &mut String, d: &Doc) {
    buf.push_str("{\"index\": {\"_index\": \"");
    buf.push_str(&d.index);
    if let Some(id) = &d.id {
        buf.push_str("\", \"_id\": \"");
        buf.push_str(id);
    }
    buf.push_str("\"}}\n");
    d.body.write(buf);
    buf.push('\n');
}

fn post_bulk(http: &Http, body: &str, stats: &Stats) {
    let path = "/_bulk?filter_path=errors,items.*.error,items.*.status,items.*._index";
    let mut attempt = 0;
    loop {
        match http.req(
            "POST",
            path,
            Some(("application/x-ndjson", body.as_bytes())),
        ) {
            Ok((429, _)) | Ok((503, _)) if attempt < 8 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(500 << attempt.min(5)));
            }
            Ok((st, text)) if (200..300).contains(&st) => {
                let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                if v.get("errors").and_then(|e| e.as_bool()) != Some(false) {
                    let items = v
                        .get("items")
                        .and_then(|i| i.as_array())
                        .cloned()
                        .unwrap_or_default();
                    let mut n = 0;
                    for it in items {
                        let op = it.get("index").cloned().unwrap_or_default();
                        if let Some(err) = op.get("error") {
                            n += 1;
                            stats.error(format!(
                                "{} (HTTP {}): {}",
                                op.get("_index").and_then(|x| x.as_str()).unwrap_or("?"),
                                op.get("status").unwrap_or(&serde_json::Value::Null),
                                trunc(&err.to_string(), 500)
                            ));
                        }
                    }
                    if n == 0 {
                        n = 1;
                        stats.error(format!(
                            "bulk answered errors!=false: {}",
                            trunc(&text, 500)
                        ));
                    }
                    stats.item_errors.fetch_add(n, Ordering::Relaxed);
                }
                return;
            }
            Ok((st, text)) => {
                stats.error(format!("bulk HTTP {st}: {}", trunc(&text, 500)));
                stats.abort.store(true, Ordering::Relaxed);
                return;
            }
            Err(e) => {
                stats.error(format!("bulk: {e}"));
                stats.abort.store(true, Ordering::Relaxed);
                return;
            }
        }
    }
}

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("saltscope-gen: {e}");
            std::process::exit(2);
        }
    };
    match run(o) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("saltscope-gen: ERROR: {e}");
            std::process::exit(1);
        }
    }
}

fn run(o: Opts) -> Result<i32, String> {
    let t0 = Instant::now();
    let cfg = o.cfg.clone();
    let prefix = cfg.prefix.clone();
    let plan = Arc::new(Plan::new(cfg.clone()));
    let njobs = plan.jobs.len();
    let minion_jobs = plan.jobs.iter().filter(|j| !j.fun.is_runner()).count();
    eprintln!(
        "saltscope-gen: planned {} returns in {} jobs ({} minion jobs, {} runner) over {} minions, {} days, seed {} ({:.1}s)",
        plan.return_docs(),
        njobs,
        minion_jobs,
        njobs - minion_jobs,
        plan.fleet.minions.len(),
        cfg.days,
        cfg.seed,
        t0.elapsed().as_secs_f64()
    );

    let http = Http::new(&o.url);
    let mut indices: Vec<String> = FUNS
        .iter()
        .filter(|f| {
            plan.jobs
                .iter()
                .any(|j| j.fun == **f && j.return_docs(&cfg) > 0)
        })
        .map(|f| return_index(&prefix, *f))
        .collect();
    indices.push(job_cache_index(&prefix));
    indices.push(event_index(&prefix));

    if !o.dry_run {
        let info = http.ok("GET", "/", None)?;
        eprintln!(
            "saltscope-gen: engine {} {} at {}",
            info.pointer("/version/distribution")
                .and_then(|v| v.as_str())
                .unwrap_or("elasticsearch"),
            info.pointer("/version/number")
                .and_then(|v| v.as_str())
                .unwrap_or("?"),
            o.url
        );
        let existing = cat_indices(&http, &prefix)?;
        if o.skip_if_loaded {
            let (st, m) = http.json("GET", &format!("/{MARKER_INDEX}/_doc/{prefix}"), None)?;
            let want = marker_doc(&cfg, njobs, 0);
            let src = m.get("_source").cloned().unwrap_or_default();
            let same = st == 200
                && [
                    "prefix",
                    "seed",
                    "returns",
                    "minions",
                    "days",
                    "states_count",
                    "extra_states",
                    "ret_events",
                    "generator",
                ]
                .iter()
                .all(|k| src.get(k) == want.get(k));
            let loaded: u64 = existing
                .iter()
                .filter(|(n, _, _)| !n.starts_with(&format!("{prefix}-master-")))
                .map(|(_, c, _)| c)
                .sum();
            if same && loaded == cfg.returns {
                println!("saltscope-gen: {prefix}-* already holds {loaded} returns for seed {} (marker {MARKER_INDEX}/{prefix}): nothing to do", cfg.seed);
                return Ok(0);
            }
            if st == 200 || !existing.is_empty() {
                eprintln!("saltscope-gen: loaded set differs (marker {}, {loaded} returns in the engine): reloading", if same { "same" } else { "different/missing" });
            }
        }
        if !existing.is_empty() {
            if !o.replace {
                return Err(format!(
                    "{} indices {prefix}-* exist already (returns have engine ids, a second load would double them): pass --replace",
                    existing.len()
                ));
            }
            for (name, _, _) in &existing {
                http.ok("DELETE", &format!("/{name}"), None)?;
            }
            eprintln!(
                "saltscope-gen: deleted {} existing {prefix}-* indices",
                existing.len()
            );
        }
        let _ = http.json("DELETE", &format!("/{MARKER_INDEX}/_doc/{prefix}"), None);
        // As the returner does: create `<name>-v1` (1 shard, 0 replicas), then the alias.
        for name in &indices {
            http.ok(
                "PUT",
                &format!("/{name}-v1"),
                Some(r#"{"settings": {"number_of_shards": 1, "number_of_replicas": 0}}"#),
            )?;
            http.ok("PUT", &format!("/{name}-v1/_alias/{name}"), Some("{}"))?;
            if !o.keep_refresh {
                http.ok(
                    "PUT",
                    &format!("/{name}-v1/_settings"),
                    Some(r#"{"index": {"refresh_interval": "-1"}}"#),
                )?;
            }
        }
    }

    let stats = Arc::new(Stats::default());
    let next = Arc::new(AtomicUsize::new(0));
    let out_file: Option<Arc<Mutex<Box<dyn Write + Send>>>> = match (&o.dry_run, &o.out) {
        (true, Some(p)) if p == "-" => Some(Arc::new(Mutex::new(Box::new(std::io::stdout())))),
        (true, Some(p)) => Some(Arc::new(Mutex::new(Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| format!("{p}: {e}"))?,
        ))))),
        _ => None,
    };
    let t_load = Instant::now();
    let mut handles = Vec::new();
    for _ in 0..o.threads {
        let (plan, stats, next, out_file) =
            (plan.clone(), stats.clone(), next.clone(), out_file.clone());
        let http = Http::new(&o.url);
        let batch = o.batch;
        handles.push(std::thread::spawn(move || {
            let mut docs: Vec<Doc> = Vec::new();
            let mut buf = String::with_capacity(8 << 20);
            let (mut in_buf, mut returns_in_buf) = (0usize, 0u64);
            let mut per_index: BTreeMap<String, u64> = BTreeMap::new();
            let flush = |buf: &mut String, in_buf: &mut usize, returns_in_buf: &mut u64| {
                if *in_buf == 0 {
                    return;
                }
                match &out_file {
                    Some(f) => {
                        if let Err(e) = f.lock().unwrap().write_all(buf.as_bytes()) {
                            stats.error(format!("writing: {e}"));
                            stats.abort.store(true, Ordering::Relaxed);
                        }
                    }
                    None => post_bulk(&http, buf, &stats),
                }
                stats.docs.fetch_add(*in_buf as u64, Ordering::Relaxed);
                stats.returns.fetch_add(*returns_in_buf, Ordering::Relaxed);
                stats.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
                buf.clear();
                *in_buf = 0;
                *returns_in_buf = 0;
            };
            loop {
                if stats.abort.load(Ordering::Relaxed) {
                    break;
                }
                let j0 = next.fetch_add(32, Ordering::Relaxed);
                if j0 >= plan.jobs.len() {
                    break;
                }
                for j in j0..(j0 + 32).min(plan.jobs.len()) {
                    docs.clear();
                    plan.job_docs(j, &mut docs);
                    returns_in_buf += plan.jobs[j].return_docs(&plan.cfg) as u64;
                    for d in &docs {
                        append_bulk(&mut buf, d);
                        *per_index.entry(d.index.clone()).or_default() += 1;
                    }
                    in_buf += docs.len();
                }
                if in_buf >= batch {
                    flush(&mut buf, &mut in_buf, &mut returns_in_buf);
                }
            }
            if !stats.abort.load(Ordering::Relaxed) {
                flush(&mut buf, &mut in_buf, &mut returns_in_buf);
            }
            let mut all = stats.per_index.lock().unwrap();
            for (k, v) in per_index {
                *all.entry(k).or_default() += v;
            }
        }));
    }
    // Progress.
    let mut last = Instant::now();
    while handles.iter().any(|h| !h.is_finished()) {
        std::thread::sleep(Duration::from_millis(200));
        if last.elapsed() >= Duration::from_secs(5) {
            last = Instant::now();
            let secs = t_load.elapsed().as_secs_f64();
            let r = stats.returns.load(Ordering::Relaxed);
            eprintln!(
                "saltscope-gen: {:>5.1}% {r}/{} returns, {} docs, {:.0} MB, {:.0}s, {:.0} docs/s",
                100.0 * r as f64 / cfg.returns.max(1) as f64,
                cfg.returns,
                stats.docs.load(Ordering::Relaxed),
                stats.bytes.load(Ordering::Relaxed) as f64 / 1e6,
                secs,
                stats.docs.load(Ordering::Relaxed) as f64 / secs
            );
        }
    }
    for h in handles {
        h.join().map_err(|_| "a worker thread panicked")?;
    }
    if let Some(f) = &out_file {
        f.lock().unwrap().flush().map_err(|e| e.to_string())?;
    }
    let load_secs = t_load.elapsed().as_secs_f64();

    let expected = stats.per_index.lock().unwrap().clone();
    let mut actual: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut mismatch = Vec::new();
    if !o.dry_run && !stats.abort.load(Ordering::Relaxed) {
        for name in &indices {
            if !o.keep_refresh {
                http.ok(
                    "PUT",
                    &format!("/{name}-v1/_settings"),
                    Some(r#"{"index": {"refresh_interval": null}}"#),
                )?;
            }
        }
        http.ok("POST", &format!("/{prefix}-*/_refresh"), None)?;
        for (name, count, size) in cat_indices(&http, &prefix)? {
            actual.insert(name.trim_end_matches("-v1").to_string(), (count, size));
        }
        for (name, want) in &expected {
            let got = actual.get(name).map(|a| a.0).unwrap_or(0);
            if got != *want {
                mismatch.push(format!(
                    "{name}: expected {want} docs, the engine holds {got}"
                ));
            }
        }
    }
    let total_secs = t0.elapsed().as_secs_f64();

    // The table.
    let docs = stats.docs.load(Ordering::Relaxed);
    let bytes = stats.bytes.load(Ordering::Relaxed);
    println!();
    println!(
        "{:<44} {:>10} {:>10} {:>12}",
        "index (alias)", "docs", "in engine", "store MB"
    );
    for (name, n) in &expected {
        let (c, sz) = actual
            .get(name)
            .map(|a| (a.0.to_string(), format!("{:.1}", a.1 as f64 / 1048576.0)))
            .unwrap_or(("-".into(), "-".into()));
        println!("{name:<44} {n:>10} {c:>10} {sz:>12}");
    }
    println!("{}", "-".repeat(79));
    println!("returns        {}", stats.returns.load(Ordering::Relaxed));
    println!(
        "jobs           {njobs} ({minion_jobs} minion jobs, {} runner jobs)",
        njobs - minion_jobs
    );
    println!("minions        {}", plan.fleet.minions.len());
    println!("documents      {docs}");
    println!(
        "bulk bytes     {bytes} ({:.1} MB, {:.0} B/doc)",
        bytes as f64 / 1e6,
        bytes as f64 / docs.max(1) as f64
    );
    println!("load seconds   {load_secs:.1} (total {total_secs:.1})");
    println!("docs/s         {:.0}", docs as f64 / load_secs.max(1e-9));

    let item_errors = stats.item_errors.load(Ordering::Relaxed);
    let errors = stats.errors.lock().unwrap().clone();
    if item_errors > 0
        || !errors.is_empty()
        || !mismatch.is_empty()
        || stats.abort.load(Ordering::Relaxed)
    {
        eprintln!("\nsaltscope-gen: FAILED: {item_errors} rejected documents");
        for e in errors.iter().chain(mismatch.iter()) {
            eprintln!("  {e}");
        }
        return Ok(1);
    }
    if !o.dry_run {
        let marker = marker_doc(&cfg, njobs, docs).to_string();
        http.ok(
            "PUT",
            &format!("/{MARKER_INDEX}/_doc/{prefix}?refresh=true"),
            Some(&marker),
        )?;
    }
    Ok(0)
}

use crate::json::At;
use serde_json::Value;

use crate::config::ConfigError;

/// Everything that can go wrong talking to the engine, carrying what a
/// person needs to act: the URL, the status and the engine's own reason.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EngineError {
    /// No HTTP answer at all: the host is down, the name does not resolve, or
    /// the browser blocked the answer (CORS).
    #[error("cannot reach {url}: {detail}")]
    Unreachable { url: String, detail: String },
    /// No answer within the request's deadline (`request_timeout_ms`).
    #[error("no answer from {url} within {} s", after_ms.div_ceil(1000))]
    Timeout { url: String, after_ms: u64 },
    /// The engine answered with a 4xx/5xx status.
    #[error("{url} answered {status}: {reason}")]
    Status {
        url: String,
        status: u16,
        /// `error.type` from the engine, e.g. `index_not_found_exception`.
        kind: Option<String>,
        reason: String,
    },
    /// An answer that is not what the engine sends for this request; `url`
    /// when it is known which request it answered.
    #[error("unexpected answer{}: {detail}", from_url(url))]
    BadResponse { url: Option<String>, detail: String },
    /// The engine answered, and what the view names is not in it (a
    /// comparison's run of a minion that never returned that job).
    #[error("{what}")]
    NotFound { what: String },
    /// The app's own `config.json` could not be read, so no engine was asked.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

fn from_url(url: &Option<String>) -> String {
    url.as_deref()
        .filter(|u| !u.is_empty())
        .map(|u| format!(" from {u}"))
        .unwrap_or_default()
}

impl EngineError {
    /// Builds the error for a 4xx/5xx answer from its body, reading the
    /// engine's `error.root_cause[0].reason`, `error.caused_by.reason` (where
    /// query syntax errors are explained) or plain `error.reason`.
    pub fn from_status(url: &str, status: u16, body: &str) -> EngineError {
        let parsed: Option<Value> = serde_json::from_str(body).ok();
        let (kind, reason) = match parsed.as_ref().and_then(|v| v.get("error")) {
            Some(error) => error_reason(error),
            None => (None, String::new()),
        };
        let reason = if !reason.is_empty() {
            reason
        } else if !body.trim().is_empty() {
            // nginx and proxies answer with HTML or plain text.
            body.chars()
                .take(300)
                .collect::<String>()
                .trim()
                .to_string()
        } else {
            "no reason given".to_string()
        };
        EngineError::Status {
            url: url.to_string(),
            status,
            kind,
            reason,
        }
    }

    /// The error of one `_msearch` item (`{"error": …, "status": 400}`).
    pub fn from_item(url: &str, item: &Value) -> EngineError {
        // A status that is not an HTTP status reads as the engine failing.
        let status = item
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .filter(|s| (100..600).contains(s))
            .unwrap_or(500);
        let (kind, reason) = item
            .get("error")
            .map(error_reason)
            .unwrap_or((None, String::new()));
        EngineError::Status {
            url: url.to_string(),
            status,
            kind,
            reason,
        }
    }

    /// The error of an answer in which some shards failed, if any did
    /// (`_shards.failed > 0`): 400 when the failures are the query's fault
    /// (a `*_exception` about parsing or the query), else 500.
    pub fn from_shard_failures(url: &str, answer: &Value) -> Option<EngineError> {
        let shards = answer.get("_shards")?;
        let failed = shards.get("failed").and_then(Value::as_u64).unwrap_or(0);
        if failed == 0 {
            return None;
        }
        let total = shards
            .get("total")
            .and_then(Value::as_u64)
            .unwrap_or(failed);
        let first = shards.at("/failures/0/reason");
        let (kind, reason) = first.map(error_reason).unwrap_or((None, String::new()));
        let query_fault = kind.as_deref().is_some_and(|k| {
            k.contains("query") || k.contains("parse") || k.contains("illegal_argument")
        });
        Some(EngineError::Status {
            url: url.to_string(),
            status: if query_fault { 400 } else { 500 },
            kind,
            reason: format!("{failed} of {total} shards failed: {reason}"),
        })
    }

    /// True when a node of the cluster failed because another node just
    /// left it (or is leaving): its transport to that node is gone. The
    /// coordinating node answers so until its cluster state drops the
    /// node; then the same request goes to the shards' other copies.
    pub fn is_node_gone(&self) -> bool {
        const NODE_GONE: [&str; 3] = [
            "node_disconnected_exception",
            "node_not_connected_exception",
            "node_closed_exception",
        ];
        matches!(self, EngineError::Status { kind: Some(k), .. } if NODE_GONE.contains(&k.as_str()))
    }

    /// What a person can do about an error the app knows the cause of,
    /// beside the engine's words; `None` for the rest.
    pub fn advice(&self) -> Option<&'static str> {
        let EngineError::Status { reason, .. } = self else {
            return None;
        };
        // Free text searches every field, and without the index templates
        // each state ID of a return's `data` is fields of its own: a few
        // words OR'ed over a thousand fields pass the engine's clause limit.
        if reason.contains("maxClauseCount") {
            return Some("The search text is looked for in every field of the returns, and these indices have more fields than the engine lets one search ask (each state ID in a return's data is fields of its own). Name the field (minion:web* AND fun:cmd.run), use fewer words, or install the index templates (scripts/index-template.sh install), which keep a return's data out of the fields.");
        }
        if self.is_bad_search() {
            return Some("The search text is read as Lucene query syntax, and this one does not parse. Close its quotes and brackets, put a phrase in quotes (\"rm -rf\"), or escape a character Lucene reserves, such as / : ( ) [ ] ~ ^, with a backslash (\\/). Change the search and apply it: asking again as it is cannot help.");
        }
        // No link of the app asks this far back: an address edited by hand
        // or kept from elsewhere.
        reason.contains("Result window is too large").then_some(
            "The address asks for a page further back than the engine serves (its index.max_result_window). Start from the first page, or narrow the time range or the filter.",
        )
    }

    /// True when the engine could not parse the free-text search (Lucene's
    /// `query_string`): the person's text is at fault, and retrying it as
    /// it is cannot help.
    pub fn is_bad_search(&self) -> bool {
        // The top reason, or Lucene's deeper one ("Cannot parse '…'").
        matches!(self, EngineError::Status { status: 400, reason, .. }
            if reason.contains("Failed to parse query") || reason.contains("Cannot parse '"))
    }

    /// True for a missing index: a soft condition for the job-cache and
    /// event-cache lookups, which a Salt setup may not have.
    pub fn is_index_not_found(&self) -> bool {
        matches!(self, EngineError::Status { kind: Some(k), .. } if k == "index_not_found_exception")
    }
}

fn error_reason(error: &Value) -> (Option<String>, String) {
    if let Value::String(s) = error {
        return (None, s.clone());
    }
    fn reason_of(e: &Value) -> &str {
        e.get("reason").and_then(Value::as_str).unwrap_or_default()
    }
    let type_of = |e: &Value| e.get("type").and_then(Value::as_str).map(str::to_string);
    let top = reason_of(error);
    // Deepest explanation first: for a query_string syntax error the top
    // reason is only "all shards failed".
    let deeper = [
        "/failed_shards/0/reason/caused_by",
        "/caused_by/caused_by",
        "/caused_by",
        "/root_cause/0",
    ]
    .iter()
    .find_map(|p| error.at(p).filter(|cause| cause.get("reason").is_some()))
    .unwrap_or(&Value::Null);
    match (top.is_empty(), reason_of(deeper)) {
        // The reason is the cause's, and so is the kind: a fetch phase that
        // failed on a node's transport is a `search_phase_execution_exception`
        // with no reason of its own, caused by a `node_not_connected_exception`.
        (true, cause) => (
            type_of(deeper).or_else(|| type_of(error)),
            cause.to_string(),
        ),
        (false, cause) if cause.is_empty() || cause == top => (type_of(error), top.to_string()),
        (false, cause) => (type_of(error), format!("{top}: {cause}")),
    }
}

/// The shape of OpenSearch 3.8's answer to a search whose fetch phase could
/// not reach a node that was stopping: its `FetchSearchPhase` fails with
/// an empty reason (`onPhaseFailure(this, "", e)`), and the failover test
/// showed it as "answered 500: [node-2][127.0.0.1:9371] Node not connected".
#[cfg(test)]
pub(crate) const FETCH_FROM_A_NODE_GONE: &str = r#"{"error":{"root_cause":[{"type":"node_not_connected_exception","reason":"[node-2][127.0.0.1:9371] Node not connected"}],"type":"search_phase_execution_exception","reason":"","phase":"fetch","grouped":true,"failed_shards":[],"caused_by":{"type":"node_not_connected_exception","reason":"[node-2][127.0.0.1:9371] Node not connected"}},"status":500}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_over_too_many_fields_is_explained_with_what_to_do() {
        // OpenSearch 3.8 on real Salt data without the index templates,
        // `redis OR nginx` in the search box: one shard of 21 failed.
        let answer = serde_json::json!({"_shards": {"total": 21, "successful": 20, "failed": 1,
            "failures": [{"shard": 0, "index": "salt-state_sls-v1", "reason": {
                "type": "too_many_nested_clauses",
                "reason": "Query contains too many nested clauses; maxClauseCount is set to 1024"}}]}});
        let e = EngineError::from_shard_failures("http://h/es/_msearch", &answer).unwrap();
        assert!(
            e.advice().is_some_and(|a| a.contains("Name the field")),
            "{e}"
        );
        let other =
            EngineError::from_status("u", 500, r#"{"error":{"type":"x","reason":"disk full"}}"#);
        assert_eq!(other.advice(), None);
    }

    #[test]
    fn a_search_text_that_does_not_parse_is_the_persons_to_change() {
        // OpenSearch 3.8, `"rm -rf` (an unclosed quote) in the search box.
        let e = EngineError::from_status(
            "http://h/es/_msearch",
            400,
            r#"{"error":{"root_cause":[{"type":"query_shard_exception","reason":"Failed to parse query [\"rm -rf]","index":"salt-cmd_run-v1"}],"type":"search_phase_execution_exception","reason":"all shards failed","phase":"query","grouped":true,"failed_shards":[{"shard":0,"index":"salt-cmd_run-v1","node":"n","reason":{"type":"query_shard_exception","reason":"Failed to parse query [\"rm -rf]","index":"salt-cmd_run-v1","caused_by":{"type":"parse_exception","reason":"Cannot parse '\"rm -rf': Lexical error at line 1, column 8.  Encountered: <EOF> after : \"\\\"rm -rf\""}}}]},"status":400}"#,
        );
        assert!(e.is_bad_search(), "{e:?}");
        assert!(
            e.advice().is_some_and(|a| a.contains("does not parse")),
            "{e}"
        );
        let down = EngineError::from_status(
            "u",
            503,
            r#"{"error":{"type":"x","reason":"Failed to parse query [x] on a node that left"}}"#,
        );
        assert!(!down.is_bad_search(), "only a 400 is the text's fault");
    }

    #[test]
    fn a_page_past_the_result_window_is_explained() {
        // OpenSearch 3.8, an events address whose cursor was edited by hand
        // (`after=1796593907693:999999:salt/auth`).
        let e = EngineError::from_status(
            "http://h/es/_msearch",
            400,
            r#"{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"Result window is too large, from + size must be less than or equal to: [10000] but was [1000099]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting."}],"type":"search_phase_execution_exception","reason":"all shards failed","phase":"query","grouped":true,"failed_shards":[{"shard":0,"index":"salt-master-event-cache-v1","node":"n","reason":{"type":"illegal_argument_exception","reason":"Result window is too large, from + size must be less than or equal to: [10000] but was [1000099]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting."}}]},"status":400}"#,
        );
        assert!(
            e.advice()
                .is_some_and(|a| a.contains("Start from the first page")),
            "{e}"
        );
    }

    #[test]
    fn a_phase_failing_without_a_reason_of_its_own_takes_its_causes_kind() {
        let e = EngineError::from_status("http://h/es/_search", 500, FETCH_FROM_A_NODE_GONE);
        assert_eq!(
            e.to_string(),
            "http://h/es/_search answered 500: [node-2][127.0.0.1:9371] Node not connected"
        );
        assert!(e.is_node_gone(), "{e:?}");
        // With a reason of its own, the kind stays the wrapper's.
        let body = r#"{"error":{"type":"search_phase_execution_exception","reason":"all shards failed","caused_by":{"type":"node_not_connected_exception","reason":"x"}},"status":500}"#;
        let e = EngineError::from_status("u", 500, body);
        assert!(!e.is_node_gone(), "{e:?}");
        // A cause without a reason is passed over for the next that has one.
        let body = r#"{"error":{"type":"exception","reason":"","caused_by":{"type":"x"},"root_cause":[{"type":"node_closed_exception","reason":"closed"}]},"status":500}"#;
        let e = EngineError::from_status("u", 500, body);
        assert!(e.is_node_gone(), "{e:?}");
        assert_eq!(e.to_string(), "u answered 500: closed");
    }

    #[test]
    fn a_missing_index_reads_the_engines_reason() {
        let body = r#"{"error":{"root_cause":[{"type":"index_not_found_exception","reason":"no such index [salt-master-job-cache]"}],"type":"index_not_found_exception","reason":"no such index [salt-master-job-cache]","index":"salt-master-job-cache"},"status":404}"#;
        let e = EngineError::from_status("http://h/es/salt-master-job-cache/_search", 404, body);
        assert!(e.is_index_not_found());
        assert_eq!(
            e.to_string(),
            "http://h/es/salt-master-job-cache/_search answered 404: no such index [salt-master-job-cache]"
        );
    }

    #[test]
    fn a_query_syntax_error_explains_itself() {
        let body = r#"{"error":{"root_cause":[{"type":"query_shard_exception","reason":"Failed to parse query [fun:(]"}],"type":"search_phase_execution_exception","reason":"all shards failed","phase":"query","failed_shards":[{"shard":0,"index":"salt-cmd_run-v1","reason":{"type":"query_shard_exception","reason":"Failed to parse query [fun:(]","caused_by":{"type":"parse_exception","reason":"Cannot parse 'fun:(': Encountered \"<EOF>\""}}}]},"status":400}"#;
        let e = EngineError::from_status("u", 400, body);
        let EngineError::Status { reason, kind, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(kind.as_deref(), Some("search_phase_execution_exception"));
        assert!(reason.contains("Cannot parse 'fun:('"), "{reason}");
    }

    #[test]
    fn an_unexpected_answer_names_its_url_only_when_known() {
        let with = EngineError::BadResponse {
            url: Some("http://h/es/_msearch".into()),
            detail: "not JSON".into(),
        };
        assert_eq!(
            with.to_string(),
            "unexpected answer from http://h/es/_msearch: not JSON"
        );
        let without = EngineError::BadResponse {
            url: None,
            detail: "too few".into(),
        };
        assert_eq!(without.to_string(), "unexpected answer: too few");
    }

    #[test]
    fn a_proxy_html_page_becomes_the_reason() {
        let e = EngineError::from_status("u", 502, "<html><body>502 Bad Gateway</body></html>");
        assert!(e.to_string().contains("502 Bad Gateway"));
        let empty = EngineError::from_status("u", 503, "");
        assert!(empty.to_string().ends_with("503: no reason given"));
    }
}

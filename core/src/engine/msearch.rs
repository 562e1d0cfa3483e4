use serde_json::{json, Value};

use super::EngineError;

/// One search inside an `_msearch`: the index (pattern) and the body.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchRequest {
    pub index: String,
    pub body: Value,
}

impl SearchRequest {
    pub fn new(index: impl Into<String>, body: Value) -> SearchRequest {
        SearchRequest {
            index: index.into(),
            body,
        }
    }
}

/// The NDJSON body of `POST /_msearch`: a header line and a body line per
/// search, newline-terminated. `ignore_unavailable` lets a job-cache or
/// event index that does not exist answer with no hits instead of failing
/// the whole view.
pub fn msearch_body(searches: &[SearchRequest]) -> String {
    let mut out = String::new();
    for s in searches {
        out.push_str(
            &json!({"index": s.index, "ignore_unavailable": true, "allow_no_indices": true})
                .to_string(),
        );
        out.push('\n');
        out.push_str(&s.body.to_string());
        out.push('\n');
    }
    out
}

/// Splits an `_msearch` answer into one result per search, in order. An item
/// error stays that item's error; so does an answer in which some shards
/// failed (a query syntax error fails on every shard that had to parse it,
/// while shards the engine skipped answer "successfully" with nothing): a
/// partial result is never shown as if it were whole. A missing item is an
/// error too, never a silently empty result.
pub fn split_msearch(
    url: &str,
    answer: &Value,
    expected: usize,
) -> Vec<Result<Value, EngineError>> {
    let items = answer.get("responses").and_then(Value::as_array);
    (0..expected)
        .map(|i| match items.and_then(|items| items.get(i)) {
            Some(item) if item.get("error").is_some() => Err(EngineError::from_item(url, item)),
            Some(item) => match EngineError::from_shard_failures(url, item) {
                Some(e) => Err(e),
                None => Ok(item.clone()),
            },
            None => Err(EngineError::BadResponse {
                url: url.to_string(),
                detail: format!("_msearch answered without response #{}", i + 1),
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_is_header_and_search_lines_ending_in_a_newline() {
        let body = msearch_body(&[
            SearchRequest::new("salt-*", json!({"size": 0})),
            SearchRequest::new(
                "salt-master-job-cache",
                json!({"query": {"ids": {"values": ["1"]}}}),
            ),
        ]);
        let lines: Vec<&str> = body.split_terminator('\n').collect();
        assert_eq!(lines.len(), 4);
        assert!(body.ends_with('\n'));
        let header: Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(header["index"], "salt-master-job-cache");
    }

    #[test]
    fn an_answer_with_failed_shards_is_an_error_not_a_short_result() {
        let answer = json!({"responses": [{"status": 200, "hits": {"hits": []},
            "_shards": {"total": 21, "successful": 4, "skipped": 0, "failed": 17, "failures": [
                {"shard": 0, "index": "salt-cmd_run-v1", "reason": {"type": "query_shard_exception",
                 "reason": "Failed to parse query [fun:(]",
                 "caused_by": {"type": "parse_exception", "reason": "Cannot parse 'fun:(': Encountered \"<EOF>\""}}}]}}]});
        let Err(EngineError::Status {
            status,
            kind,
            reason,
            ..
        }) = &split_msearch("u", &answer, 1)[0]
        else {
            panic!("a partial answer must be an error")
        };
        assert_eq!(*status, 400);
        assert_eq!(kind.as_deref(), Some("query_shard_exception"));
        assert!(
            reason
                .starts_with("17 of 21 shards failed: Failed to parse query [fun:(]: Cannot parse"),
            "{reason}"
        );
    }

    #[test]
    fn item_errors_and_missing_items_are_errors() {
        let answer = json!({"responses": [
            {"hits": {"hits": []}, "status": 200},
            {"error": {"type": "query_shard_exception", "reason": "bad"}, "status": 400}
        ]});
        let parts = split_msearch("u", &answer, 3);
        assert!(parts[0].is_ok());
        assert!(parts[0].is_ok());
        assert!(
            matches!(&parts[1], Err(EngineError::Status { status: 400, reason, .. }) if reason == "bad")
        );
        assert!(matches!(&parts[2], Err(EngineError::BadResponse { .. })));
    }
}

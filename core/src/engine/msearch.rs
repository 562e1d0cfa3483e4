//! `_msearch`: several searches in one round trip, named. A view describes
//! its searches as a bundle — a struct whose fields are the searches (see
//! [`search_bundle!`](crate::search_bundle)) — and reads the answers back
//! from a struct with the same field names, never by position.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::{Body, EngineError, HttpRequest, Reply, Transport};
use crate::text::json_text;

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

/// One search's answer, or its own error (a query syntax error in one
/// search does not fail the others).
pub type SearchAnswer = Result<Value, EngineError>;

/// Searches sent together, read back by name.
pub trait SearchBundle {
    type Answers;
    /// Every search, in the order they go on the wire.
    fn searches<'a>(&'a self, out: &mut Vec<&'a SearchRequest>);
    /// The answers in the same order; a missing one is an error.
    fn read(&self, answers: &mut dyn Iterator<Item = SearchAnswer>) -> Self::Answers;
}

impl SearchBundle for SearchRequest {
    type Answers = SearchAnswer;
    fn searches<'a>(&'a self, out: &mut Vec<&'a SearchRequest>) {
        out.push(self);
    }
    fn read(&self, answers: &mut dyn Iterator<Item = SearchAnswer>) -> SearchAnswer {
        answers.next().unwrap_or_else(|| Err(missing_answer()))
    }
}

/// A search that is only sometimes needed (the export's state results).
impl<B: SearchBundle> SearchBundle for Option<B> {
    type Answers = Option<B::Answers>;
    fn searches<'a>(&'a self, out: &mut Vec<&'a SearchRequest>) {
        if let Some(b) = self {
            b.searches(out);
        }
    }
    fn read(&self, answers: &mut dyn Iterator<Item = SearchAnswer>) -> Self::Answers {
        self.as_ref().map(|b| b.read(answers))
    }
}

/// Two bundles in one round trip.
impl<A: SearchBundle, B: SearchBundle> SearchBundle for (A, B) {
    type Answers = (A::Answers, B::Answers);
    fn searches<'a>(&'a self, out: &mut Vec<&'a SearchRequest>) {
        self.0.searches(out);
        self.1.searches(out);
    }
    fn read(&self, answers: &mut dyn Iterator<Item = SearchAnswer>) -> Self::Answers {
        let a = self.0.read(answers);
        (a, self.1.read(answers))
    }
}

/// Declares a bundle of named searches and the struct of their answers:
///
/// ```
/// saltscope_core::search_bundle! {
///     /// The job page's searches.
///     pub struct JobSearches => JobAnswers { returns, publish_event }
/// }
/// ```
///
/// A field is a [`SearchRequest`] unless it names its type, such as
/// `Option<SearchRequest>` for a search that is not always needed.
#[macro_export]
macro_rules! search_bundle {
    (@search) => { $crate::engine::SearchRequest };
    (@search $ty:ty) => { $ty };
    ($(#[$meta:meta])* $vis:vis struct $name:ident => $answers:ident { $($field:ident $(: $ty:ty)?),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        $vis struct $name { $(pub $field: $crate::search_bundle!(@search $($ty)?)),+ }

        #[derive(Debug)]
        $vis struct $answers {
            $(pub $field: <$crate::search_bundle!(@search $($ty)?) as $crate::engine::SearchBundle>::Answers),+
        }

        impl $crate::engine::SearchBundle for $name {
            type Answers = $answers;
            fn searches<'a>(&'a self, out: &mut Vec<&'a $crate::engine::SearchRequest>) {
                $($crate::engine::SearchBundle::searches(&self.$field, out);)+
            }
            fn read(
                &self,
                answers: &mut dyn Iterator<Item = $crate::engine::SearchAnswer>,
            ) -> $answers {
                $answers { $($field: $crate::engine::SearchBundle::read(&self.$field, answers)),+ }
            }
        }
    };
}

fn missing_answer() -> EngineError {
    EngineError::BadResponse {
        url: None,
        detail: "_msearch answered fewer responses than searches".into(),
    }
}

/// `POST /_msearch` with the bundle's searches as NDJSON: a header line and
/// a body line per search, newline-terminated. `ignore_unavailable` lets a
/// job-cache or event index that does not exist answer with no hits
/// instead of failing the whole view.
pub fn msearch_request<B: SearchBundle + ?Sized>(bundle: &B) -> HttpRequest {
    let mut searches = Vec::new();
    bundle.searches(&mut searches);
    let mut out = String::new();
    for s in searches {
        out.push_str(&json_text(
            &json!({"index": s.index, "ignore_unavailable": true, "allow_no_indices": true}),
        ));
        out.push('\n');
        out.push_str(&json_text(&s.body));
        out.push('\n');
    }
    HttpRequest::post("/_msearch", Body::NdJson(out))
}

#[derive(Deserialize)]
struct MsearchAnswer<'a> {
    #[serde(borrow)]
    responses: Vec<&'a RawValue>,
}

/// Reads an `_msearch` reply into the bundle's answers. Each search's answer
/// is parsed on its own, and if need be each of its hits (see
/// `engine::lenient`): a document nested deeper than the JSON reader
/// allows is that document's note, any other part of an answer that cannot
/// be read is that search's error, never the view's. An item error stays
/// that item's error; so does an answer in which some shards failed (a
/// query syntax error fails on every shard that had to parse it, while
/// shards the engine skipped answer "successfully" with nothing): a partial
/// result is never shown as if it were whole.
pub fn read_msearch<B: SearchBundle + ?Sized>(
    bundle: &B,
    reply: &Reply,
) -> Result<B::Answers, EngineError> {
    let url = reply.url.as_str();
    let answer: MsearchAnswer =
        serde_json::from_slice(&reply.body).map_err(|e| EngineError::BadResponse {
            url: Some(url.to_string()),
            detail: format!("not an _msearch answer ({e})"),
        })?;
    let mut items = answer.responses.into_iter().map(|raw| read_item(url, raw));
    Ok(bundle.read(&mut items))
}

fn read_item(url: &str, raw: &RawValue) -> SearchAnswer {
    let item = super::lenient::read_answer(raw.get()).map_err(|e| EngineError::BadResponse {
        url: Some(url.to_string()),
        detail: format!("one search's answer could not be read ({e})"),
    })?;
    if item.get("error").is_some() {
        return Err(EngineError::from_item(url, &item));
    }
    match EngineError::from_shard_failures(url, &item) {
        Some(e) => Err(e),
        None => Ok(item),
    }
}

/// One `_msearch` round trip for `bundle`.
pub async fn msearch<T: Transport, B: SearchBundle + ?Sized>(
    t: &T,
    bundle: &B,
) -> Result<B::Answers, EngineError> {
    let reply = t.send(&msearch_request(bundle)).await?;
    read_msearch(bundle, &reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::search_bundle! {
        struct Two => TwoAnswers { first, second }
    }

    fn two() -> Two {
        Two {
            first: SearchRequest::new("salt-*", json!({"size": 0})),
            second: SearchRequest::new(
                "salt-master-job-cache",
                json!({"query": {"ids": {"values": ["1"]}}}),
            ),
        }
    }

    fn reply(v: Value) -> Reply {
        Reply {
            url: "http://h/es/_msearch".into(),
            body: serde_json::to_vec(&v).unwrap(),
        }
    }

    #[test]
    fn the_body_is_header_and_search_lines_ending_in_a_newline() {
        let request = msearch_request(&two());
        assert_eq!(request.path, "/_msearch");
        let body = request.body.text();
        let lines: Vec<&str> = body.split_terminator('\n').collect();
        assert_eq!(lines.len(), 4);
        assert!(body.ends_with('\n'));
        let header: Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(header["index"], "salt-master-job-cache");
    }

    #[test]
    fn answers_come_back_by_name() {
        let answers = read_msearch(
            &two(),
            &reply(json!({"responses": [{"hits": {"total": 1}}, {"hits": {"total": 2}}]})),
        )
        .unwrap();
        assert_eq!(answers.first.unwrap()["hits"]["total"], 1);
        assert_eq!(answers.second.unwrap()["hits"]["total"], 2);
    }

    #[test]
    fn an_answer_with_failed_shards_is_an_error_not_a_short_result() {
        let answer = json!({"responses": [{"status": 200, "hits": {"hits": []},
            "_shards": {"total": 21, "successful": 4, "skipped": 0, "failed": 17, "failures": [
                {"shard": 0, "index": "salt-cmd_run-v1", "reason": {"type": "query_shard_exception",
                 "reason": "Failed to parse query [fun:(]",
                 "caused_by": {"type": "parse_exception", "reason": "Cannot parse 'fun:(': Encountered \"<EOF>\""}}}]}}]});
        let first = SearchRequest::new("salt-*", json!({}));
        let Err(EngineError::Status {
            status,
            kind,
            reason,
            ..
        }) = read_msearch(&first, &reply(answer)).unwrap()
        else {
            panic!("a partial answer must be an error")
        };
        assert_eq!(status, 400);
        assert_eq!(kind.as_deref(), Some("query_shard_exception"));
        assert!(
            reason
                .starts_with("17 of 21 shards failed: Failed to parse query [fun:(]: Cannot parse"),
            "{reason}"
        );
    }

    #[test]
    fn item_errors_and_missing_items_are_errors() {
        let bundle = (two(), Some(SearchRequest::new("x", json!({}))));
        let (both, third) = read_msearch(
            &bundle,
            &reply(json!({"responses": [
                {"hits": {"hits": []}, "status": 200},
                {"error": {"type": "query_shard_exception", "reason": "bad"}, "status": 400}
            ]})),
        )
        .unwrap();
        assert!(both.first.is_ok());
        assert!(
            matches!(&both.second, Err(EngineError::Status { status: 400, reason, .. }) if reason == "bad")
        );
        assert!(matches!(third, Some(Err(EngineError::BadResponse { .. }))));
        let none: Option<SearchRequest> = None;
        assert_eq!(
            msearch_request(&(two(), none)).body.text().lines().count(),
            4
        );
    }

    #[test]
    fn one_answer_too_deep_to_read_fails_alone() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let body = format!(
            r#"{{"responses": [{{"aggregations": {{"x": {deep}}}, "hits": {{"hits": []}}}}, {{"hits": {{"total": 2}}}}]}}"#
        );
        let answers = read_msearch(
            &two(),
            &Reply {
                url: "u".into(),
                body: body.into_bytes(),
            },
        );
        let answers = answers.expect("the reply itself reads");
        assert!(answers.first.is_err());
        assert_eq!(answers.second.unwrap()["hits"]["total"], 2);
    }

    #[test]
    fn a_hit_too_deep_to_read_is_read_as_text_and_its_search_answers() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let body = format!(
            r#"{{"responses": [{{"hits": {{"hits": [{{"_id": "d", "_source": {{"data": {deep}}}}}, {{"_id": "ok"}}]}}}}, {{}}]}}"#
        );
        let answers = read_msearch(
            &two(),
            &Reply {
                url: "u".into(),
                body: body.into_bytes(),
            },
        )
        .expect("the reply itself reads");
        let first = answers.first.expect("the search answers");
        assert_eq!(first["hits"]["hits"][0]["_source"]["data"], deep);
        assert_eq!(first["hits"]["hits"][1]["_id"], "ok");
    }
}

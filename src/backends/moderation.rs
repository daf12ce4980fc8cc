//! The OpenAI moderation API (`POST /v1/moderations`): P(unsafe) = the highest category score,
//! flagged categories reported.

use super::transport::{post_json, Transport};
use super::{BackendError, BackendKind, GuardBackend, Judgement, NativeLabel, RemoteTarget};
use crate::screens::input::question::Question;
use futures_util::future::{BoxFuture, FutureExt};
use serde_json::{json, Value};

#[derive(Debug)]
pub struct ModerationBackend {
    pub http: Transport,
    pub target: RemoteTarget,
}

pub fn parse_moderation(body: &Value) -> Result<Judgement, BackendError> {
    let result = body
        .pointer("/results/0")
        .ok_or_else(|| BackendError::Unparsable("no results[0]".into()))?;
    let scores = result
        .get("category_scores")
        .and_then(Value::as_object)
        .ok_or_else(|| BackendError::Unparsable("no category_scores".into()))?;
    if scores.is_empty() {
        return Err(BackendError::Unparsable("empty category_scores".into()));
    }
    let mut max = 0f32;
    for v in scores.values() {
        let s = v
            .as_f64()
            .ok_or_else(|| BackendError::Unparsable("a score is not a number".into()))?;
        max = max.max(s as f32);
    }
    let mut categories: Vec<String> = result
        .get("categories")
        .and_then(Value::as_object)
        .map(|c| {
            c.iter()
                .filter(|(_, v)| v.as_bool() == Some(true))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    categories.sort();
    let flagged = match result.get("flagged") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(BackendError::Unparsable(
                "`flagged` is not a boolean".into(),
            ))
        }
    };
    let label = if flagged {
        NativeLabel::Unsafe
    } else {
        NativeLabel::Score
    };
    Ok(Judgement {
        label,
        p_unsafe: Some(max.clamp(0.0, 1.0)),
        categories,
    })
}

impl GuardBackend for ModerationBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::OpenaiModeration
    }

    fn classify<'a>(&'a self, q: &'a Question) -> BoxFuture<'a, Result<Judgement, BackendError>> {
        async move {
            let body = json!({"model": self.target.model, "input": q.outbound()});
            let answer = post_json(&self.http, &self.target, "moderations", &body).await?;
            parse_moderation(&answer)
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn moderation_answer() {
        let body = json!({"id": "modr-1", "results": [{"flagged": true,
            "categories": {"harassment": true, "violence": true, "hate": false},
            "category_scores": {"harassment": 0.52, "violence": 0.86, "hate": 0.01}}]});
        let j = parse_moderation(&body);
        assert_eq!(j.as_ref().map(|j| j.p_unsafe), Ok(Some(0.86)));
        assert_eq!(
            j.map(|j| j.categories),
            Ok(vec!["harassment".into(), "violence".into()])
        );
        assert!(parse_moderation(&json!({"results": []})).is_err());
        assert!(
            parse_moderation(&json!({"results": [{"category_scores": {"x": "high"}}]})).is_err()
        );
        // No scores at all is not "safe": it is an answer we cannot read.
        assert!(
            parse_moderation(&json!({"results": [{"flagged": false, "category_scores": {}}]}))
                .is_err()
        );
        assert!(parse_moderation(
            &json!({"results": [{"flagged": "yes", "category_scores": {"x": 0.1}}]})
        )
        .is_err());
        // A flag with low scores stays an explicit unsafe label.
        let j = parse_moderation(
            &json!({"results": [{"flagged": true, "category_scores": {"x": 0.4}}]}),
        );
        assert_eq!(j.map(|j| j.label), Ok(NativeLabel::Unsafe));
    }
}

//! The OpenAI moderation API (`POST /v1/moderations`): P(unsafe) = the highest category score,
//! flagged categories reported.

use super::{
    post_json, BackendError, BackendKind, GuardBackend, Judgement, NativeLabel, RemoteTarget,
};
use futures_util::future::{BoxFuture, FutureExt};
use serde_json::{json, Value};

#[derive(Debug)]
pub struct ModerationBackend {
    pub http: reqwest::Client,
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
    let flagged = result
        .get("flagged")
        .and_then(Value::as_bool)
        .unwrap_or(false);
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

    fn classify<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Judgement, BackendError>> {
        async move {
            let body = json!({"model": self.target.model, "input": text});
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
    }
}

//! Text-classification servers (Hugging Face TEI `/predict`), e.g. Llama Prompt Guard 2:
//! P(unsafe) = the malicious class probability. Long questions are split into windows (the
//! classifier reads 512 tokens) sent as one batch, and the maximum is taken.

use super::{
    post_json, BackendError, BackendKind, GuardBackend, Judgement, NativeLabel, RemoteTarget,
};
use futures_util::future::{BoxFuture, FutureExt};
use serde_json::{json, Value};

/// Characters per window: well under 512 tokens for English and Bangla alike.
pub const WINDOW_CHARS: usize = 1_200;
/// Windows overlap so an attack phrase cut at a border is still whole in one of them.
pub const WINDOW_OVERLAP: usize = 200;

#[derive(Debug)]
pub struct TeiBackend {
    pub http: reqwest::Client,
    pub target: RemoteTarget,
}

pub fn windows(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= WINDOW_CHARS {
        return vec![text.to_string()];
    }
    let step = WINDOW_CHARS - WINDOW_OVERLAP;
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let end = (start + WINDOW_CHARS).min(chars.len());
        out.push(chars[start..end].iter().collect());
        if end == chars.len() {
            break;
        }
        start += step;
    }
    out
}

/// Labels that mean "attack" across classifier conventions.
fn is_malicious(label: &str) -> bool {
    matches!(
        label.trim().to_ascii_uppercase().as_str(),
        "MALICIOUS" | "LABEL_1" | "INJECTION" | "JAILBREAK" | "UNSAFE" | "HARMFUL"
    )
}

/// One window's predictions: `[{label, score}, ...]`.
fn malicious_score(predictions: &Value) -> Result<f32, BackendError> {
    let list = predictions
        .as_array()
        .ok_or_else(|| BackendError::Unparsable("prediction is not a list".into()))?;
    let mut seen = false;
    let mut p = 0f32;
    for pred in list {
        let label = pred.get("label").and_then(Value::as_str);
        let score = pred.get("score").and_then(Value::as_f64);
        let (Some(label), Some(score)) = (label, score) else {
            return Err(BackendError::Unparsable(
                "prediction without label/score".into(),
            ));
        };
        seen = true;
        if is_malicious(label) {
            p = p.max(score as f32);
        }
    }
    if seen {
        Ok(p.clamp(0.0, 1.0))
    } else {
        Err(BackendError::Unparsable("no predictions".into()))
    }
}

pub fn parse_predict(body: &Value, windows: usize) -> Result<f32, BackendError> {
    let outer = body
        .as_array()
        .ok_or_else(|| BackendError::Unparsable("body is not a list".into()))?;
    // A single input may come back flat: [{label, score}, ...].
    if windows == 1 && outer.first().is_some_and(Value::is_object) {
        return malicious_score(body);
    }
    if outer.len() != windows {
        return Err(BackendError::Unparsable(
            "one prediction list per window expected".into(),
        ));
    }
    outer
        .iter()
        .try_fold(0f32, |m, w| Ok(m.max(malicious_score(w)?)))
}

impl GuardBackend for TeiBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Tei
    }

    fn classify<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Judgement, BackendError>> {
        async move {
            let windows = windows(text);
            let inputs: Vec<Vec<String>> = windows.iter().map(|w| vec![w.clone()]).collect();
            let body = json!({"inputs": inputs, "truncate": true});
            let answer = post_json(&self.http, &self.target, "predict", &body).await?;
            let p = parse_predict(&answer, windows.len())?;
            Ok(Judgement {
                label: NativeLabel::Score,
                p_unsafe: Some(p),
                categories: vec!["prompt_attack".into()],
            })
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn predict_shapes() {
        let flat =
            json!([{"label": "MALICIOUS", "score": 0.998}, {"label": "BENIGN", "score": 0.002}]);
        assert_eq!(parse_predict(&flat, 1), Ok(0.998));
        let batch = json!([[{"label": "LABEL_0", "score": 0.9}, {"label": "LABEL_1", "score": 0.1}],
                           [{"label": "LABEL_1", "score": 0.7}, {"label": "LABEL_0", "score": 0.3}]]);
        assert_eq!(parse_predict(&batch, 2), Ok(0.7));
        assert!(parse_predict(&json!({"error": "x"}), 1).is_err());
        assert!(parse_predict(&json!([[{"label": "X"}]]), 1).is_err());
    }

    #[test]
    fn windows_cover_everything() {
        let text: String = "a".repeat(3000);
        let w = windows(&text);
        assert_eq!(w.len(), 3);
        assert!(w.iter().all(|x| x.chars().count() <= WINDOW_CHARS));
        assert_eq!(windows("short"), vec!["short".to_string()]);
    }
}

//! Text-classification servers (Hugging Face TEI `/predict`), e.g. Llama Prompt Guard 2:
//! P(unsafe) = the malicious class probability. Long questions are split into windows (the
//! classifier reads 512 tokens) sent as one batch, and the maximum is taken.

use super::transport::{post_json, Transport};
use super::{BackendError, BackendKind, GuardBackend, Judgement, NativeLabel, RemoteTarget};
use crate::screens::input::question::Question;
use futures_util::future::{BoxFuture, FutureExt};
use serde_json::{json, Value};

/// Characters per window: well under 512 tokens for English and Bangla alike.
pub const WINDOW_CHARS: usize = 1_200;
/// Windows overlap so an attack phrase cut at a border is still whole in one of them.
pub const WINDOW_OVERLAP: usize = 200;

#[derive(Debug)]
pub struct TeiBackend {
    pub http: Transport,
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

/// What a classifier label means, across the conventions of the prompt-attack classifiers
/// (Prompt Guard 1 and 2, ProtectAI's DeBERTa, ...). Any other label is not understood.
fn label_is_malicious(label: &str) -> Option<bool> {
    match label.trim().to_ascii_uppercase().as_str() {
        "MALICIOUS" | "LABEL_1" | "INJECTION" | "JAILBREAK" | "UNSAFE" | "HARMFUL" => Some(true),
        "BENIGN" | "LABEL_0" | "SAFE" => Some(false),
        _ => None,
    }
}

/// One window's predictions: `[{label, score}, ...]`. P(attack) is the highest attack score,
/// or one minus the benign score when that is higher (every class but benign is an attack, so
/// a top-1 answer `BENIGN 0.6` means 0.4 of attack). A label we do not know fails the answer.
fn malicious_score(predictions: &Value) -> Result<f32, BackendError> {
    let list = predictions
        .as_array()
        .ok_or_else(|| BackendError::Unparsable("prediction is not a list".into()))?;
    if list.is_empty() {
        return Err(BackendError::Unparsable("no predictions".into()));
    }
    let mut p = 0f32;
    for pred in list {
        let label = pred.get("label").and_then(Value::as_str);
        let score = pred.get("score").and_then(Value::as_f64);
        let (Some(label), Some(score)) = (label, score) else {
            return Err(BackendError::Unparsable(
                "prediction without label/score".into(),
            ));
        };
        if !(0.0..=1.0).contains(&score) {
            return Err(BackendError::Unparsable("score outside [0, 1]".into()));
        }
        match label_is_malicious(label) {
            Some(true) => p = p.max(score as f32),
            Some(false) => p = p.max(1.0 - score as f32),
            None => return Err(BackendError::Unparsable("unknown classifier label".into())),
        }
    }
    Ok(p.clamp(0.0, 1.0))
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

    fn classify<'a>(&'a self, q: &'a Question) -> BoxFuture<'a, Result<Judgement, BackendError>> {
        async move {
            let windows = windows(q.outbound());
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
        assert!(parse_predict(&flat, 1).is_ok_and(|p| (p - 0.998).abs() < 1e-6));
        let batch = json!([[{"label": "LABEL_0", "score": 0.9}, {"label": "LABEL_1", "score": 0.1}],
                           [{"label": "LABEL_1", "score": 0.7}, {"label": "LABEL_0", "score": 0.3}]]);
        assert!(parse_predict(&batch, 2).is_ok_and(|p| (p - 0.7).abs() < 1e-6));
        assert!(parse_predict(&json!({"error": "x"}), 1).is_err());
        assert!(parse_predict(&json!([[{"label": "X"}]]), 1).is_err());
        // Labels from another convention are not "safe": the answer cannot be read.
        let toxic = json!([{"label": "toxic", "score": 0.9}, {"label": "non-toxic", "score": 0.1}]);
        assert!(parse_predict(&toxic, 1).is_err());
        assert!(parse_predict(&json!([[]]), 1).is_err());
        // A top-1 benign answer still carries the attack share.
        let p = parse_predict(&json!([{"label": "BENIGN", "score": 0.6}]), 1);
        assert!(p.is_ok_and(|p| (p - 0.4).abs() < 1e-6));
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

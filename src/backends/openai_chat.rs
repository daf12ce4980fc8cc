//! Guard models behind an OpenAI-compatible chat server (vLLM, SGLang, llama.cpp server,
//! Ollama `/v1`): Llama Guard 3 and Qwen3Guard-Gen. We send plain `messages` and let the server
//! apply the model's own chat template (hand-rendered guard prompts drift byte by byte).
//!
//! Answers are read leniently: leading whitespace, any case, extra fields, categories with or
//! without spaces. Anything that is not one of the model's documented answers is unparsable.

use super::transport::{post_json, Transport};
use super::{BackendError, BackendKind, GuardBackend, Judgement, NativeLabel, RemoteTarget};
use crate::screens::input::question::Question;
use futures_util::future::{BoxFuture, FutureExt};
use serde_json::{json, Value};

/// Which model family answers, and so how to read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    LlamaGuard3,
    Qwen3Guard,
}

#[derive(Debug)]
pub struct OpenAiChatBackend {
    pub http: Transport,
    pub target: RemoteTarget,
    pub protocol: Protocol,
}

impl OpenAiChatBackend {
    pub fn request_body(&self, text: &str) -> Value {
        let max_tokens = match self.protocol {
            Protocol::LlamaGuard3 => 20,
            Protocol::Qwen3Guard => 64,
        };
        json!({
            "model": self.target.model,
            "messages": [{"role": "user", "content": text}],
            "temperature": 0,
            "max_tokens": max_tokens,
            "logprobs": true,
            "top_logprobs": 5,
        })
    }
}

impl GuardBackend for OpenAiChatBackend {
    fn kind(&self) -> BackendKind {
        match self.protocol {
            Protocol::LlamaGuard3 => BackendKind::LlamaGuard3,
            Protocol::Qwen3Guard => BackendKind::Qwen3guard,
        }
    }

    fn classify<'a>(&'a self, q: &'a Question) -> BoxFuture<'a, Result<Judgement, BackendError>> {
        async move {
            let body = post_json(
                &self.http,
                &self.target,
                "chat/completions",
                &self.request_body(q.outbound()),
            )
            .await?;
            let choice = body
                .pointer("/choices/0")
                .ok_or_else(|| unparsable("no choices[0]"))?;
            let content = choice
                .pointer("/message/content")
                .and_then(Value::as_str)
                .ok_or_else(|| unparsable("no choices[0].message.content"))?;
            let logprobs = choice
                .pointer("/logprobs/content")
                .and_then(Value::as_array);
            match self.protocol {
                Protocol::LlamaGuard3 => parse_llama_guard(content, logprobs.map(Vec::as_slice)),
                Protocol::Qwen3Guard => parse_qwen3guard(content),
            }
        }
        .boxed()
    }
}

fn unparsable(what: &str) -> BackendError {
    BackendError::Unparsable(what.to_string())
}

/// Llama Guard 3 hazard codes → model-card names (S14 exists on the 8B model only).
pub fn llama_guard_category(code: &str) -> Option<&'static str> {
    Some(match code {
        "S1" => "Violent Crimes",
        "S2" => "Non-Violent Crimes",
        "S3" => "Sex-Related Crimes",
        "S4" => "Child Sexual Exploitation",
        "S5" => "Defamation",
        "S6" => "Specialized Advice",
        "S7" => "Privacy",
        "S8" => "Intellectual Property",
        "S9" => "Indiscriminate Weapons",
        "S10" => "Hate",
        "S11" => "Suicide & Self-Harm",
        "S12" => "Sexual Content",
        "S13" => "Elections",
        "S14" => "Code Interpreter Abuse",
        _ => return None,
    })
}

/// `safe` or `unsafe\nS1,S10` (after optional whitespace). P(unsafe) comes from the first
/// non-whitespace generated token's `top_logprobs`: a two-way softmax of `unsafe` vs `safe`.
pub fn parse_llama_guard(
    content: &str,
    logprobs: Option<&[Value]>,
) -> Result<Judgement, BackendError> {
    let mut lines = content
        .trim_start()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty());
    let first = lines
        .next()
        .ok_or_else(|| unparsable("empty answer"))?
        .to_ascii_lowercase();
    let label = match first.as_str() {
        "safe" => NativeLabel::Safe,
        "unsafe" => NativeLabel::Unsafe,
        _ => return Err(unparsable("first line is neither `safe` nor `unsafe`")),
    };
    let mut categories = Vec::new();
    if label == NativeLabel::Safe && lines.next().is_some() {
        return Err(unparsable("text after `safe`"));
    }
    if label == NativeLabel::Unsafe {
        if lines.clone().count() > 1 {
            return Err(unparsable("more than one line after `unsafe`"));
        }
        if let Some(line) = lines.next() {
            for code in line
                .split(',')
                .map(|c| c.trim().to_ascii_uppercase())
                .filter(|c| !c.is_empty())
            {
                match llama_guard_category(&code) {
                    Some(name) => categories.push(format!("{code}: {name}")),
                    None => return Err(unparsable("unknown Llama Guard category")),
                }
            }
        }
    }
    let p_unsafe = logprobs.and_then(verdict_token_probability);
    Ok(Judgement {
        label,
        p_unsafe,
        categories,
    })
}

/// P(unsafe) from the first generated position whose token is not whitespace.
fn verdict_token_probability(positions: &[Value]) -> Option<f32> {
    let position = positions.iter().find(|p| {
        p.get("token")
            .and_then(Value::as_str)
            .is_some_and(|t| !t.trim().is_empty())
    })?;
    let alts = position.get("top_logprobs").and_then(Value::as_array)?;
    let mut safe = None;
    let mut unsafe_ = None;
    for alt in alts {
        let token = alt
            .get("token")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let lp = alt.get("logprob").and_then(Value::as_f64);
        match token.as_str() {
            "safe" if safe.is_none() => safe = lp,
            "unsafe" if unsafe_.is_none() => unsafe_ = lp,
            _ => {}
        }
    }
    match (safe, unsafe_) {
        (Some(s), Some(u)) => Some((1.0 / (1.0 + (s - u).exp())) as f32),
        // Only one verdict token in the top-k: the other is below every listed alternative.
        (Some(s), None) => Some((1.0 - s.exp()).clamp(0.0, 1.0) as f32),
        (None, Some(u)) => Some(u.exp().clamp(0.0, 1.0) as f32),
        (None, None) => None,
    }
}

/// `Safety: Safe|Unsafe|Controversial` and `Categories: A, B` (or `None`).
pub fn parse_qwen3guard(content: &str) -> Result<Judgement, BackendError> {
    let mut label = None;
    let mut categories = Vec::new();
    for line in content.lines().map(str::trim) {
        let lower = line.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("safety:") {
            if label.is_some() {
                return Err(unparsable("more than one `Safety:` line"));
            }
            label = Some(match rest.trim() {
                "safe" => NativeLabel::Safe,
                "unsafe" => NativeLabel::Unsafe,
                "controversial" => NativeLabel::Controversial,
                _ => return Err(unparsable("unknown Safety value")),
            });
        } else if lower.starts_with("categories:") {
            let rest = &line["categories:".len()..];
            categories = rest
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case("none"))
                .map(str::to_string)
                .collect();
        }
    }
    let label = label.ok_or_else(|| unparsable("no `Safety:` line"))?;
    Ok(Judgement {
        label,
        p_unsafe: None,
        categories,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_guard_outputs() {
        let j = parse_llama_guard("\n\nunsafe\nS1,S10", None);
        assert_eq!(
            j,
            Ok(Judgement {
                label: NativeLabel::Unsafe,
                p_unsafe: None,
                categories: vec!["S1: Violent Crimes".into(), "S10: Hate".into()]
            })
        );
        assert_eq!(
            parse_llama_guard("safe", None).map(|j| j.label),
            Ok(NativeLabel::Safe)
        );
        assert_eq!(
            parse_llama_guard(" Unsafe \n s9 ", None).map(|j| j.categories),
            Ok(vec!["S9: Indiscriminate Weapons".into()])
        );
        assert!(parse_llama_guard("", None).is_err());
        assert!(parse_llama_guard("I think this is safe", None).is_err());
        assert!(parse_llama_guard("unsafe\nS99", None).is_err());
        // Conflicting or extra lines cannot be mapped with certainty.
        assert!(parse_llama_guard("safe\nunsafe", None).is_err());
        assert!(parse_llama_guard("safe\nS1", None).is_err());
        assert!(parse_llama_guard("unsafe\nS1\nsafe", None).is_err());
    }

    #[test]
    fn llama_guard_logprobs() {
        let lp = serde_json::json!([
            {"token": "\n\n", "logprob": -0.001, "top_logprobs": [{"token": "\n\n", "logprob": -0.001}]},
            {"token": "safe", "logprob": -0.4, "top_logprobs": [
                {"token": "safe", "logprob": -0.4}, {"token": "unsafe", "logprob": -1.1}]}
        ]);
        let j = parse_llama_guard("\n\nsafe", lp.as_array().map(Vec::as_slice));
        let p = j.ok().and_then(|j| j.p_unsafe).unwrap_or(-1.0);
        // softmax(-1.1 vs -0.4) = 1 / (1 + e^0.7) ≈ 0.332
        assert!((p - 0.332).abs() < 0.01, "{p}");
    }

    #[test]
    fn qwen3guard_outputs() {
        let j = parse_qwen3guard("Safety: Controversial\nCategories: Politically Sensitive Topics");
        assert_eq!(j.as_ref().map(|j| j.label), Ok(NativeLabel::Controversial));
        assert_eq!(
            j.map(|j| j.categories),
            Ok(vec!["Politically Sensitive Topics".into()])
        );
        assert_eq!(
            parse_qwen3guard("Safety: Unsafe\nCategories: Violent, Jailbreak")
                .map(|j| j.categories.len()),
            Ok(2)
        );
        assert_eq!(
            parse_qwen3guard("Safety: Safe\nCategories: None").map(|j| j.categories.len()),
            Ok(0)
        );
        assert!(parse_qwen3guard("Safe").is_err());
        assert!(parse_qwen3guard("Safety: Maybe").is_err());
        // Several verdicts: not the last one, not the first one, none.
        assert!(parse_qwen3guard("Safety: Unsafe\nCategories: Violent\nSafety: Safe").is_err());
    }
}

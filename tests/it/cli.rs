//! The `guard` binary: `screen --jsonl` keeps order, echoes ids and survives bad lines;
//! `check-config` reports every problem at once.

use crate::harness::{repo_root, TempConfig};
use std::io::Write;
use std::process::{Command, Stdio};

fn guard() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_guard"));
    c.current_dir(repo_root());
    c.env_remove("GUARD_MODEL_URL")
        .env_remove("GUARD_JUDGE_URL")
        .env_remove("GUARD_CONFIG_DIR");
    c
}

#[test]
fn screen_one_question() {
    let out = guard()
        .args([
            "screen",
            "--product",
            "wallet-assistant",
            "amar card block kore den",
        ])
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    };
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(v["reason"], "unsupported_language");
    assert_eq!(v["language"], "bn-Latn");
}

#[test]
fn jsonl_keeps_order_echoes_ids_and_reports_bad_lines() {
    let child = guard()
        .args(["screen", "--product", "wallet-assistant", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let input = concat!(
        "{\"id\": 1, \"text\": \"block my card\"}\n",
        "this is not json\n",
        "{\"id\": \"x\", \"text\": \"amar taka kothay gelo\"}\n",
        "{\"id\": 3}\n",
        "{\"text\": \"আমার কার্ড হারিয়ে গেছে\"}\n",
    );
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).ok();
    }
    let out = match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    };
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_default())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(
        (lines[0]["id"].clone(), lines[0]["decision"].clone()),
        (serde_json::json!(1), serde_json::json!("allow"))
    );
    assert_eq!(lines[1]["error"]["code"], "malformed_json");
    assert_eq!(
        (lines[2]["id"].clone(), lines[2]["language"].clone()),
        (serde_json::json!("x"), serde_json::json!("bn-Latn"))
    );
    assert_eq!(
        (lines[3]["id"].clone(), lines[3]["error"]["code"].clone()),
        (serde_json::json!(3), serde_json::json!("missing_text"))
    );
    assert_eq!(lines[4]["language"], "bn");
}

#[test]
fn check_config_ok_on_the_shipped_configuration() {
    let out = match guard().arg("check-config").output() {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("bank-operator") && text.contains("wallet-assistant"),
        "{text}"
    );
    // The shipped products have review rules and a borderline band but no judge: a warning
    // each, and still a success.
    assert!(
        text.lines()
            .any(|l| l.starts_with("warn  bank-operator  review rules")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("warn  wallet-assistant  a borderline band")),
        "{text}"
    );
}

#[test]
fn check_config_reports_every_problem_at_once() {
    let cfg = TempConfig::new(|name, text| match name {
        "bank-operator" => text
            .replace("[cache]", "[cache]\nmax_entrys = 5")
            .replace("timeout_ms = 1500", "timeout_ms = 0"),
        _ => text
            .replace(
                "languages = [\"en\", \"bn\"]",
                "languages = [\"en\", \"fr\"]",
            )
            .replace(
                "judge_prompts/wallet-assistant.md",
                "judge_prompts/missing.md",
            ),
    });
    let out = match guard()
        .args([
            "--config-dir",
            &cfg.path().display().to_string(),
            "check-config",
        ])
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "products/bank-operator.toml",
        "unknown field `max_entrys`",
        "products/wallet-assistant.toml",
        "unsupported language `fr`",
        "judge_prompts/missing.md",
        "hint:",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in:\n{err}");
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .ok()
        .and_then(|l| l.local_addr().ok())
        .map_or(0, |a| a.port())
}

/// Protected mode: no API keys and a non-loopback address is refused at start, with the way
/// out named. (Nothing is bound: the process exits before listening.)
#[test]
fn a_non_loopback_address_without_api_keys_is_refused() {
    let out = guard()
        .args(["serve", "--listen", &format!("0.0.0.0:{}", free_port())])
        .env_remove("GUARD_API_KEYS")
        .env_remove("GUARD_API_KEYS_FILE")
        .env_remove("GUARD_ALLOW_UNAUTHENTICATED")
        .env("GUARD_AUDIT_LOG", "off")
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to listen") && err.contains("GUARD_API_KEYS"),
        "{err}"
    );
}

/// SIGTERM: the server stops accepting, answers what it has, writes out the audit log and
/// exits 0; every answered screen has its audit line.
#[test]
fn sigterm_flushes_the_audit_log_and_exits_0() {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    };
    let audit = dir.path().join("audit.jsonl");
    let listen = format!("127.0.0.1:{}", free_port());
    let child = guard()
        .args(["serve", "--listen", &listen, "--workers", "1"])
        .env("GUARD_AUDIT_LOG", &audit)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let post = |text: &str| -> Option<String> {
        use std::io::Read;
        let body = serde_json::json!({"product": "wallet-assistant", "text": text}).to_string();
        let mut s = std::net::TcpStream::connect(&listen).ok()?;
        write!(
            s,
            "POST /v1/screen HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .ok()?;
        let mut answer = String::new();
        s.read_to_string(&mut answer).ok()?;
        Some(answer)
    };
    // Until it answers or exits: a debug build loading the shipped configuration on a busy
    // machine takes as long as it takes (the bound only keeps a wedged start from hanging).
    let mut up = false;
    for _ in 0..6000 {
        if post("hello").is_some_and(|a| a.starts_with("HTTP/1.1 200")) {
            up = true;
            break;
        }
        if child.try_wait().is_ok_and(|s| s.is_some()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(up, "server did not come up");
    let sent = 25;
    for i in 0..sent {
        let answer = post(&format!("what is the fee for payment number {i}")).unwrap_or_default();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert!(term.is_ok_and(|s| s.success()));
    let status = child.wait();
    assert!(status.as_ref().is_ok_and(|s| s.success()), "{status:?}");
    let lines = std::fs::read_to_string(&audit).unwrap_or_default();
    // The readiness probes were screens too: at least `sent` + 1 lines, every one whole JSON.
    let parsed: Vec<serde_json::Value> = lines
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(parsed.len(), lines.lines().count(), "a torn line");
    assert!(
        parsed.len() > sent,
        "{} lines for {sent} screens",
        parsed.len()
    );
}

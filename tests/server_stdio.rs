#![cfg(feature = "server")]
//! `mcpres serve` over stdio, both revisions, spoken in raw JSON-RPC.

mod server_support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use server_support::*;

const T: Duration = Duration::from_secs(10);

fn tool_text(resp: &Value) -> &str {
    resp.pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no text content in {resp}"))
}

#[test]
fn legacy_handshake_and_catalogue() {
    let mut s = StdioServer::start(&[]);
    let init = s.initialize();
    assert_eq!(init["result"]["protocolVersion"], LEGACY);
    assert_eq!(
        init["result"]["serverInfo"]["name"],
        "mcpres-reference-server"
    );
    let caps = &init["result"]["capabilities"];
    for c in ["tools", "resources", "prompts", "completions", "logging"] {
        assert!(caps.get(c).is_some(), "capability {c} missing in {caps}");
    }
    let (tools, _) = s.call(2, "tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("tools array")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "echo",
            "add",
            "slow",
            "counter",
            "progress",
            "test_simple_text",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
            "test_tool_with_logging",
            "test_tool_with_progress",
            "test_error_handling",
            "test_sampling",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums"
        ]
    );
    // Legacy results carry no resultType.
    assert!(tools["result"].get("resultType").is_none(), "{tools}");
    let (ping, _) = s.call(3, "ping", json!({}));
    assert_eq!(ping["result"], json!({}));
    let (lvl, _) = s.call(4, "logging/setLevel", json!({"level": "info"}));
    assert_eq!(lvl["result"], json!({}));
    let (status, _, _) = s.finish(T);
    assert!(status.success());
}

#[test]
fn legacy_unknown_revision_is_answered_with_ours() {
    let mut s = StdioServer::start(&[]);
    let (resp, _) = s.call(
        1,
        "initialize",
        json!({"protocolVersion": "2024-01-01", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}),
    );
    assert_eq!(resp["result"]["protocolVersion"], LEGACY, "{resp}");
}

#[test]
fn every_tool_has_its_documented_result() {
    let mut s = StdioServer::start(&[]);
    s.initialize();
    let (r, _) = s.call(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "héllo"}}),
    );
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text": "héllo"}])
    );
    let (r, _) = s.call(
        3,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 40, "b": 2}}),
    );
    assert_eq!(tool_text(&r), "42");
    assert_eq!(r["result"]["structuredContent"], json!({"sum": 42}));
    let (r, _) = s.call(
        4,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 9007199254740991_i64, "b": 1}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    let started = Instant::now();
    let (r, _) = s.call(
        5,
        "tools/call",
        json!({"name": "slow", "arguments": {"delayMs": 120}}),
    );
    assert_eq!(tool_text(&r), "slept 120 ms");
    assert!(started.elapsed() >= Duration::from_millis(120));
    // counter: one effect per idempotency key, the original result replayed.
    let (a, _) = s.call(
        6,
        "tools/call",
        json!({"name": "counter", "arguments": {"key": "k1", "amount": 5}}),
    );
    let (b, _) = s.call(
        7,
        "tools/call",
        json!({"name": "counter", "arguments": {"key": "k1", "amount": 5}}),
    );
    let (c, _) = s.call(
        8,
        "tools/call",
        json!({"name": "counter", "arguments": {"key": "k2"}}),
    );
    assert_eq!(a["result"], b["result"]);
    assert_eq!(
        a["result"]["structuredContent"],
        json!({"key": "k1", "total": 5})
    );
    assert_eq!(
        c["result"]["structuredContent"],
        json!({"key": "k2", "total": 6})
    );
    let (st, _) = s.call(
        9,
        "resources/read",
        json!({"uri": "mcpres://state/counter"}),
    );
    let state: Value =
        serde_json::from_str(st["result"]["contents"][0]["text"].as_str().expect("text"))
            .expect("json");
    assert_eq!(state, json!({"total": 6, "effects": 2, "keys": 2}));
    // progress with a token: one notification per step, in order.
    let (r, notes) = s.call(
        10,
        "tools/call",
        json!({"name": "progress", "arguments": {"steps": 3, "stepDelayMs": 10}, "_meta": {"progressToken": "p1"}}),
    );
    assert_eq!(tool_text(&r), "completed 3 steps");
    let progress: Vec<f64> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| {
            assert_eq!(n["params"]["progressToken"], "p1");
            n["params"]["progress"].as_f64().expect("progress")
        })
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    // fixtures
    let (r, _) = s.call(
        11,
        "tools/call",
        json!({"name": "test_simple_text", "arguments": {}}),
    );
    assert_eq!(tool_text(&r), "This is a simple text response for testing.");
    let (r, _) = s.call(
        12,
        "tools/call",
        json!({"name": "test_image_content", "arguments": {}}),
    );
    assert_eq!(r["result"]["content"][0]["type"], "image");
    assert_eq!(r["result"]["content"][0]["mimeType"], "image/png");
    let (r, _) = s.call(
        13,
        "tools/call",
        json!({"name": "test_audio_content", "arguments": {}}),
    );
    assert_eq!(r["result"]["content"][0]["mimeType"], "audio/wav");
    let (r, _) = s.call(
        14,
        "tools/call",
        json!({"name": "test_embedded_resource", "arguments": {}}),
    );
    assert_eq!(
        r["result"]["content"][0]["resource"]["uri"],
        "test://embedded-resource"
    );
    let (r, _) = s.call(
        15,
        "tools/call",
        json!({"name": "test_multiple_content_types", "arguments": {}}),
    );
    assert_eq!(r["result"]["content"].as_array().map(Vec::len), Some(3));
    let (r, notes) = s.call(
        16,
        "tools/call",
        json!({"name": "test_tool_with_logging", "arguments": {}}),
    );
    assert_eq!(tool_text(&r), "Tool with logging executed successfully");
    assert_eq!(
        notes
            .iter()
            .filter(|n| n["method"] == "notifications/message")
            .count(),
        3
    );
    let (r, notes) = s.call(
        17,
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 7}}),
    );
    assert_eq!(tool_text(&r), "Tool with progress executed successfully");
    assert_eq!(
        notes
            .iter()
            .filter(|n| n["method"] == "notifications/progress")
            .count(),
        3
    );
    let (r, _) = s.call(
        18,
        "tools/call",
        json!({"name": "test_error_handling", "arguments": {}}),
    );
    assert_eq!(r["result"]["isError"], true);
    let (r, _) = s.call(
        19,
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert!(r.get("error").is_some(), "{r}");
    let (status, _, _) = s.finish(T);
    assert!(status.success());
}

#[test]
fn slow_tool_honours_cancellation() {
    let mut s = StdioServer::start(&[]);
    s.initialize();
    s.send(&request(
        2,
        "tools/call",
        json!({"name": "slow", "arguments": {"delayMs": 5000}}),
    ));
    std::thread::sleep(Duration::from_millis(100));
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "test"}}));
    // No late success for the cancelled request; the server stays usable.
    let (r, notes) = s.call(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "after"}}),
    );
    assert_eq!(tool_text(&r), "after");
    assert!(notes.iter().all(|n| n.get("result").is_none()), "{notes:?}");
    let started = Instant::now();
    let (status, rest, _) = s.finish(T);
    assert!(status.success());
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        !String::from_utf8_lossy(&rest).contains("slept"),
        "late success"
    );
}

#[test]
fn resources_prompts_and_completions() {
    let mut s = StdioServer::start(&[]);
    s.initialize();
    let (r, _) = s.call(2, "resources/list", json!({}));
    let uris: Vec<&str> = r["result"]["resources"]
        .as_array()
        .expect("list")
        .iter()
        .map(|x| x["uri"].as_str().expect("uri"))
        .collect();
    assert_eq!(
        uris,
        [
            "mcpres://static/hello",
            "mcpres://state/counter",
            "test://static-text",
            "test://static-binary",
            "test://watched-resource"
        ]
    );
    // A subscription to a resource it has is accepted; to one it does not
    // have, refused as a read of it is (-32002).
    let (r, _) = s.call(
        40,
        "resources/subscribe",
        json!({"uri": "test://watched-resource"}),
    );
    assert_eq!(r["result"], json!({}), "{r}");
    let (r, _) = s.call(
        41,
        "resources/subscribe",
        json!({"uri": "https://example.com/a"}),
    );
    assert_eq!(r["error"]["code"], -32002, "{r}");
    let (r, _) = s.call(
        42,
        "resources/unsubscribe",
        json!({"uri": "test://nowhere"}),
    );
    assert_eq!(r["error"]["code"], -32002, "{r}");
    let (r, _) = s.call(3, "resources/read", json!({"uri": "mcpres://static/hello"}));
    assert_eq!(r["result"]["contents"][0]["text"], "hello from mcpres");
    let (r, _) = s.call(4, "resources/read", json!({"uri": "test://static-text"}));
    assert_eq!(
        r["result"]["contents"][0]["text"],
        "This is the content of the static text resource."
    );
    let (r, _) = s.call(5, "resources/templates/list", json!({}));
    assert_eq!(
        r["result"]["resourceTemplates"][0]["uriTemplate"],
        "test://template/{id}/data"
    );
    let (r, _) = s.call(
        6,
        "resources/read",
        json!({"uri": "test://template/42/data"}),
    );
    let data: Value =
        serde_json::from_str(r["result"]["contents"][0]["text"].as_str().expect("text"))
            .expect("json");
    assert_eq!(
        data,
        json!({"id": "42", "templateTest": true, "data": "Data for ID: 42"})
    );
    let (r, _) = s.call(7, "resources/read", json!({"uri": "mcpres://nope"}));
    assert!(r["error"]["code"].is_i64(), "{r}");
    let (r, _) = s.call(8, "prompts/list", json!({}));
    assert_eq!(r["result"]["prompts"][0]["name"], "greeting");
    let (r, _) = s.call(
        9,
        "prompts/get",
        json!({"name": "greeting", "arguments": {"name": "Ada"}}),
    );
    assert_eq!(r["result"]["messages"][0]["content"]["text"], "Hello, Ada!");
    let (r, _) = s.call(
        10,
        "prompts/get",
        json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "x", "arg2": "y"}}),
    );
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='x', arg2='y'"
    );
    let (r, _) = s.call(
        11,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "name", "value": "c"}}),
    );
    assert_eq!(r["result"]["completion"]["values"], json!(["carol"]));
    s.finish(T);
}

#[test]
fn modern_revision_discover_and_stateless_calls() {
    let mut s = StdioServer::start(&[]);
    let (d, _) = s.call(1, "server/discover", with_modern_meta(json!({})));
    let r = &d["result"];
    assert_eq!(r["resultType"], "complete", "{d}");
    let versions = r["supportedVersions"]
        .as_array()
        .expect("supportedVersions");
    assert!(
        versions.contains(&json!(MODERN)) && versions.contains(&json!(LEGACY)),
        "{d}"
    );
    assert!(r["capabilities"].get("tools").is_some());
    // No initialize: every request carries its own metadata.
    let (t, _) = s.call(2, "tools/list", with_modern_meta(json!({})));
    assert_eq!(t["result"]["resultType"], "complete", "{t}");
    assert_eq!(t["result"]["ttlMs"], 60000);
    assert_eq!(t["result"]["cacheScope"], "public");
    let (c, _) = s.call(
        3,
        "tools/call",
        with_modern_meta(json!({"name": "echo", "arguments": {"text": "m"}})),
    );
    assert_eq!(c["result"]["resultType"], "complete", "{c}");
    assert_eq!(tool_text(&c), "m");
    let (rr, _) = s.call(
        4,
        "resources/read",
        with_modern_meta(json!({"uri": "mcpres://state/counter"})),
    );
    assert_eq!(rr["result"]["cacheScope"], "private", "{rr}");
    assert_eq!(rr["result"]["ttlMs"], 0);
    // Unsupported revision: the standard error listing what we support.
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let (u, _) = s.call(5, "tools/list", json!({"_meta": meta}));
    assert_eq!(u["error"]["code"], -32022, "{u}");
    assert!(
        u["error"]["data"]["supported"]
            .as_array()
            .is_some_and(|a| a.contains(&json!(MODERN))),
        "{u}"
    );
    let (status, _, _) = s.finish(T);
    assert!(status.success());
}

#[test]
fn legacy_only_server_rejects_discover_as_unknown_method() {
    let mut s = StdioServer::start(&["--revision", LEGACY]);
    let (d, _) = s.call(1, "server/discover", with_modern_meta(json!({})));
    assert_eq!(d["error"]["code"], -32601, "{d}");
    let init = s.initialize();
    assert_eq!(init["result"]["protocolVersion"], LEGACY);
    s.finish(T);
}

#[test]
fn malformed_and_oversized_input_is_answered_and_survived() {
    let mut s = StdioServer::start(&["--max-message-bytes", "2048"]);
    s.send_raw(b"{not json\n");
    let e = s.recv(T).expect("parse error answer");
    assert_eq!(
        e,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})
    );
    s.send_raw(&[0xff, 0xfe, b'\n']);
    assert_eq!(s.recv(T).expect("answer")["error"]["code"], -32700);
    let mut big = vec![b' '; 5000];
    big.push(b'\n');
    s.send_raw(&big);
    assert_eq!(s.recv(T).expect("answer")["error"]["code"], -32600);
    let init = s.initialize();
    assert_eq!(init["result"]["protocolVersion"], LEGACY);
    let (r, _) = s.call(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "still here"}}),
    );
    assert_eq!(tool_text(&r), "still here");
    let (status, raw, err) = s.finish(T);
    assert!(status.success(), "{err}");
    // stdout purity: every byte belongs to a JSON frame.
    for line in raw.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        serde_json::from_slice::<Value>(line).expect("stdout carries only JSON-RPC frames");
    }
}

#[test]
fn sigterm_ends_the_server_cleanly() {
    let mut s = StdioServer::start(&[]);
    s.initialize();
    let pid = s.pid();
    signal(pid, "TERM");
    let status = s.wait(T);
    assert_eq!(status.code(), Some(0));
    assert!(!process_alive(pid));
}

#[test]
fn sigint_ends_the_server_cleanly() {
    let mut s = StdioServer::start(&[]);
    s.initialize();
    signal(s.pid(), "INT");
    assert_eq!(s.wait(T).code(), Some(0));
}

#[test]
fn bad_options_are_refused() {
    for args in [
        vec!["--revision", "2024-11-05"],
        vec!["--transport", "http", "--bind", "0.0.0.0"],
        vec!["--fault", "no-such-fault"],
        vec!["--fault", "timeout@sometimes"],
    ] {
        let out = std::process::Command::new(BIN)
            .arg("serve")
            .args(&args)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run");
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn sampling_and_elicitation_fixtures_ask_the_client() {
    let mut s = StdioServer::start(&[]);
    let mut params = initialize_params();
    params["capabilities"] = json!({"sampling": {}, "elicitation": {}});
    s.call(1, "initialize", params);
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s.send(&request(
        2,
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "hi"}}),
    ));
    let ask = s.recv(T).expect("sampling request");
    assert_eq!(ask["method"], "sampling/createMessage", "{ask}");
    assert_eq!(ask["params"]["messages"][0]["content"]["text"], "hi");
    s.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m", "stopReason": "endTurn"}}));
    let r = s.recv(T).expect("tool result");
    assert_eq!(tool_text(&r), "LLM response: sampled");
    s.send(&request(
        3,
        "tools/call",
        json!({"name": "test_elicitation", "arguments": {"message": "who?"}}),
    ));
    let ask = s.recv(T).expect("elicitation request");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(
        ask["params"]["requestedSchema"]["required"],
        json!(["username", "email"])
    );
    s.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}));
    let r = s.recv(T).expect("tool result");
    assert_eq!(tool_text(&r), "User response: action=decline, content=null");
    let (status, _, _) = s.finish(T);
    assert!(status.success());
}

#[test]
fn notification_before_initialize_does_not_kill_the_server() {
    let mut s = StdioServer::start(&[]);
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s.send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}));
    let init = s.initialize();
    assert_eq!(init["result"]["protocolVersion"], LEGACY, "{init}");
    let (r, _) = s.call(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "ok"}}),
    );
    assert_eq!(tool_text(&r), "ok");
    let (status, _, _) = s.finish(T);
    assert!(status.success());
}

#[test]
fn stdin_eof_still_answers_requests_in_flight() {
    let mut s = StdioServer::start(&[]);
    let mut batch = Vec::new();
    for (id, method, params) in [
        (1, "server/discover", with_modern_meta(json!({}))),
        (
            2,
            "tools/call",
            with_modern_meta(json!({"name": "slow", "arguments": {"delayMs": 300}})),
        ),
        (
            3,
            "tools/call",
            with_modern_meta(json!({"name": "echo", "arguments": {"text": "e"}})),
        ),
    ] {
        batch.extend(serde_json::to_vec(&request(id, method, params)).expect("json"));
        batch.push(b'\n');
    }
    s.send_raw(&batch);
    let (status, raw, _) = s.finish(T);
    assert!(status.success());
    let ids: Vec<i64> = raw
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_slice::<Value>(l).expect("json")["id"]
                .as_i64()
                .expect("id")
        })
        .collect();
    assert_eq!(ids.len(), 3, "{}", String::from_utf8_lossy(&raw));
    assert!(ids.contains(&2), "the slow answer arrives before exit");
}

/// Issue 40, item 18: a client that declared neither `sampling` nor
/// `elicitation` is never sent either request: the fixture tools answer with
/// a tool execution error that says why.
#[test]
fn undeclared_client_capabilities_are_never_requested() {
    let mut s = StdioServer::start(&[]);
    s.initialize();
    for (id, tool, args) in [
        (2, "test_sampling", json!({"prompt": "hi"})),
        (3, "test_elicitation", json!({"message": "who?"})),
        (4, "test_elicitation_sep1034_defaults", json!({})),
    ] {
        s.send(&request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": args}),
        ));
        let r = s.recv(T).expect("an answer");
        assert_eq!(r["id"], id, "{tool}: a request was sent instead: {r}");
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert!(tool_text(&r).contains("did not declare"), "{r}");
    }
    let (status, _, _) = s.finish(T);
    assert!(status.success());
}

/// Issue 40, item 18: inputs are validated as declared. Extra arguments
/// (every schema says `additionalProperties: false`), `steps` below its
/// `minimum`, a cursor the server never issued and a completion for an
/// unknown prompt are invalid params (-32602), with a message that states
/// the rule.
#[test]
fn declared_input_rules_are_enforced() {
    let mut s = StdioServer::start(&[]);
    s.initialize();
    let cases = [
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x", "extra": 1}}),
            "takes no argument `extra`",
        ),
        (
            "tools/call",
            json!({"name": "progress", "arguments": {"steps": 0}}),
            "between 1 and 100",
        ),
        ("tools/list", json!({"cursor": "bogus"}), "invalid cursor"),
        (
            "resources/list",
            json!({"cursor": "bogus"}),
            "invalid cursor",
        ),
        ("prompts/list", json!({"cursor": "bogus"}), "invalid cursor"),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "no-such-prompt"}, "argument": {"name": "x", "value": ""}}),
            "unknown prompt",
        ),
    ];
    for (i, (method, params, says)) in cases.into_iter().enumerate() {
        let (r, _) = s.call(10 + i as i64, method, params.clone());
        assert_eq!(r["error"]["code"], -32602, "{method} {params}: {r}");
        assert!(
            r["error"]["message"].as_str().unwrap_or("").contains(says),
            "{method}: {r}"
        );
    }
    // The valid forms still serve.
    let (r, _) = s.call(
        30,
        "tools/call",
        json!({"name": "progress", "arguments": {"steps": 1, "stepDelayMs": 0}}),
    );
    assert!(r.get("result").is_some(), "{r}");
    let (r, _) = s.call(
        31,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "name", "value": "a"}}),
    );
    assert_eq!(r["result"]["completion"]["values"], json!(["alice"]), "{r}");
    let (status, _, _) = s.finish(T);
    assert!(status.success());
}

//! The library's other server features over stdio (resources, prompts, completion, ping, log
//! level), against a small Python server written for this test: what is sent, what comes back,
//! and what is refused without being sent.

use mcp_harness_client::{Client, ClientOptions, ErrorKind, InputHandler, StdioCommand};
use serde_json::{Value, json};

/// argv: CAPABILITIES (a JSON object, the `capabilities` it declares).
const SERVER: &str = r#"
import json, sys
caps = json.loads(sys.argv[1])
seen = []
def answer(mid, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    method, mid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    seen.append(method)
    if method == "initialize":
        answer(mid, {"protocolVersion": params["protocolVersion"], "capabilities": caps,
                     "serverInfo": {"name": "features"}})
    elif method == "resources/list":
        if "cursor" not in params:
            answer(mid, {"resources": [{"uri": "file:///a", "name": "a"}], "nextCursor": "2"})
        else:
            answer(mid, {"resources": [{"uri": "file:///b", "name": "b", "size": 5}]})
    elif method == "resources/templates/list":
        answer(mid, {"resourceTemplates": [{"uriTemplate": "file:///{x}", "name": "x"}]})
    elif method == "resources/read":
        answer(mid, {"contents": [{"uri": params["uri"], "mimeType": "application/x", "blob": "aGVsbG8="}]})
    elif method == "prompts/list":
        answer(mid, {"prompts": [{"name": "p"}, {"name": "p"}]})
    elif method == "prompts/get":
        answer(mid, {"description": json.dumps(params.get("arguments")),
                     "messages": [{"role": "user", "content": {"type": "text", "text": params["name"]}}]})
    elif method == "completion/complete":
        answer(mid, {"completion": {"values": [json.dumps(params.get("context"))], "hasMore": False}})
    elif method in ("ping", "logging/setLevel"):
        answer(mid, {})
    elif method == "tools/call":
        answer(mid, {"content": [], "structuredContent": {"seen": seen}})
"#;

fn server(capabilities: Value) -> StdioCommand {
    let argv = vec![
        "python3".to_owned(),
        "-c".to_owned(),
        SERVER.to_owned(),
        capabilities.to_string(),
    ];
    StdioCommand::from_argv(argv).expect("argv is not empty")
}

async fn seen(client: &Client) -> Value {
    let result = client.call_tool("seen", json!({})).await.unwrap();
    match result.output {
        mcp_harness_client::ToolOutput::Structured(v) => v["seen"].clone(),
        other => panic!("seen: {other:?}"),
    }
}

#[tokio::test]
async fn every_feature_the_server_declared() {
    let caps = json!({"tools":{}, "resources":{}, "prompts":{}, "completions":{}, "logging":{}});
    let client = Client::connect_stdio(&server(caps), ClientOptions::default())
        .await
        .unwrap();
    let resources = client.list_resources().await.unwrap();
    assert_eq!(resources[1], json!({"uri":"file:///b","name":"b","size":5}));
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0]["uriTemplate"], "file:///{x}");
    let read = client
        .read_resource("file:///a", &InputHandler::new())
        .await
        .unwrap();
    assert_eq!(
        read,
        json!({"contents":[{"uri":"file:///a","mimeType":"application/x","bytes":5,
            "sha256":"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}]})
    );
    let e = client.list_prompts().await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::DuplicateName, "{e}");
    let arguments = json!({"code":"x"}).as_object().cloned();
    let prompt = client
        .get_prompt("p", arguments, &InputHandler::new())
        .await
        .unwrap();
    assert_eq!(prompt["description"], r#"{"code": "x"}"#);
    assert_eq!(prompt["messages"][0]["content"]["text"], "p");
    let bare = client
        .get_prompt("p", None, &InputHandler::new())
        .await
        .unwrap();
    assert_eq!(bare["description"], "null", "no arguments member is sent");
    let reference = json!({"type":"ref/prompt","name":"p"});
    let argument = json!({"name":"a","value":""});
    let done = client
        .complete(
            reference.clone(),
            argument.clone(),
            Some(json!({"arguments":{}})),
        )
        .await
        .unwrap();
    assert_eq!(
        done,
        json!({"values":[r#"{"arguments": {}}"#],"hasMore":false})
    );
    let done = client.complete(reference, argument, None).await.unwrap();
    assert_eq!(done["values"][0], "null");
    client.ping().await.unwrap();
    client.set_logging_level("warning").await.unwrap();
    client.close().await;
}

#[tokio::test]
async fn undeclared_features_are_refused_without_traffic() {
    let client = Client::connect_stdio(&server(json!({"tools":{}})), ClientOptions::default())
        .await
        .unwrap();
    let none = InputHandler::new();
    let refusals = [
        client.list_resources().await.map(drop),
        client.list_resource_templates().await.map(drop),
        client.read_resource("file:///a", &none).await.map(drop),
        client.list_prompts().await.map(drop),
        client.get_prompt("p", None, &none).await.map(drop),
        client.complete(json!({}), json!({}), None).await.map(drop),
        client.set_logging_level("info").await,
    ];
    for refusal in refusals {
        assert_eq!(refusal.unwrap_err().kind, ErrorKind::CapabilityMissing);
    }
    client.ping().await.unwrap();
    assert_eq!(
        seen(&client).await,
        json!([
            "initialize",
            "notifications/initialized",
            "ping",
            "tools/call"
        ])
    );
    client.close().await;

    let client = Client::connect_stdio(&server(json!({})), ClientOptions::default())
        .await
        .unwrap();
    let e = client.list_tools().await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::CapabilityMissing);
    client.close().await;
}

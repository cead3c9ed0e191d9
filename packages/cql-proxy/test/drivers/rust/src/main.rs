//! Drives the Rust `scylla` driver through the proxies, one command per stdin line, one JSON line
//! per answer on stdout, so a test can change the cluster between commands and ask what the
//! driver sees:
//!
//! - `report`: every node the driver knows (address, host id, DC, rack, its tokens in the ring,
//!   whether the driver holds a connection to it) and the keyspaces of its schema metadata;
//! - `work KEYSPACE N`: N prepared writes and reads of partition keys 0..N (token-aware routing to
//!   the proxies), plus `SELECT host_id FROM system.local` N times, with each coordinator;
//! - `quit`.
//!
//! Usage: muster-scylla-check HOST:PORT
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_counts(map: &BTreeMap<String, u64>) -> String {
    let fields: Vec<String> = map.iter().map(|(k, v)| format!("{}:{}", json_string(k), v)).collect();
    format!("{{{}}}", fields.join(","))
}

fn report(session: &Session) -> String {
    let state = session.get_cluster_state();
    let mut tokens: BTreeMap<String, u64> = BTreeMap::new();
    for (_, node) in state.replica_locator().ring().iter() {
        *tokens.entry(node.host_id.to_string()).or_default() += 1;
    }
    let mut nodes: Vec<String> = state
        .get_nodes_info()
        .iter()
        .map(|n| {
            format!(
                "{{\"address\":{},\"hostId\":{},\"dc\":{},\"rack\":{},\"tokens\":{},\"connected\":{}}}",
                json_string(&format!("{}:{}", n.address.ip(), n.address.port())),
                json_string(&n.host_id.to_string()),
                json_string(n.datacenter.as_deref().unwrap_or("")),
                json_string(n.rack.as_deref().unwrap_or("")),
                tokens.get(&n.host_id.to_string()).copied().unwrap_or(0),
                n.is_connected()
            )
        })
        .collect();
    nodes.sort();
    let mut keyspaces: Vec<String> = state.keyspaces_iter().map(|(name, _)| json_string(name)).collect();
    keyspaces.sort();
    format!("{{\"nodes\":[{}],\"keyspaces\":[{}]}}", nodes.join(","), keyspaces.join(","))
}

async fn work(session: &Session, keyspace: &str, n: i32) -> String {
    let mut errors: Vec<String> = Vec::new();
    let mut coordinators: BTreeMap<String, u64> = BTreeMap::new();
    let mut local_ids: BTreeMap<String, u64> = BTreeMap::new();
    let mut ok: u64 = 0;
    let setup = [
        format!("CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"),
        format!("CREATE TABLE IF NOT EXISTS {keyspace}.t (k int PRIMARY KEY, v text)"),
    ];
    for ddl in setup.iter() {
        if let Err(e) = session.query_unpaged(ddl.as_str(), &[]).await {
            errors.push(format!("{ddl}: {e}"));
        }
    }
    if let Err(e) = session.await_schema_agreement().await {
        errors.push(format!("schema agreement: {e}"));
    }
    let insert = session.prepare(format!("INSERT INTO {keyspace}.t (k, v) VALUES (?, ?)")).await;
    let select = session.prepare(format!("SELECT v FROM {keyspace}.t WHERE k = ?")).await;
    match (insert, select) {
        (Ok(insert), Ok(select)) => {
            for k in 0..n {
                let value = format!("v{k}");
                if let Err(e) = session.execute_unpaged(&insert, (k, value.as_str())).await {
                    errors.push(format!("insert {k}: {e}"));
                    continue;
                }
                match session.execute_unpaged(&select, (k,)).await {
                    Ok(result) => {
                        let at = result.request_coordinator().node().address;
                        *coordinators.entry(format!("{}:{}", at.ip(), at.port())).or_default() += 1;
                        let read = result
                            .into_rows_result()
                            .ok()
                            .and_then(|rows| rows.maybe_first_row::<(String,)>().ok().flatten());
                        if read.as_ref().map(|(v,)| v == &value).unwrap_or(false) {
                            ok += 1;
                        } else {
                            errors.push(format!("read {k}: {read:?}"));
                        }
                    }
                    Err(e) => errors.push(format!("select {k}: {e}")),
                }
            }
        }
        (Err(e), _) | (_, Err(e)) => errors.push(format!("prepare: {e}")),
    }
    for _ in 0..n {
        match session.query_unpaged("SELECT host_id FROM system.local", &[]).await {
            Ok(result) => {
                let at = std::sync::Arc::clone(result.request_coordinator().node());
                let id = result
                    .into_rows_result()
                    .ok()
                    .and_then(|rows| rows.maybe_first_row::<(uuid::Uuid,)>().ok().flatten());
                let same = id.map(|(id,)| id == at.host_id).unwrap_or(false);
                *local_ids.entry(format!("{}:{}", at.address.ip(), same)).or_default() += 1;
            }
            Err(e) => errors.push(format!("system.local: {e}")),
        }
    }
    errors.truncate(20);
    let errors: Vec<String> = errors.iter().map(|e| json_string(e)).collect();
    format!(
        "{{\"ok\":{ok},\"coordinators\":{},\"localHostIdMatches\":{},\"errors\":[{}]}}",
        json_counts(&coordinators),
        json_counts(&local_ids),
        errors.join(",")
    )
}

#[tokio::main]
async fn main() {
    let contact = std::env::args().nth(1).expect("usage: muster-scylla-check HOST:PORT");
    let session = SessionBuilder::new()
        .known_node(&contact)
        .connection_timeout(Duration::from_secs(5))
        .build()
        .await;
    let session = match session {
        Ok(s) => s,
        Err(e) => {
            println!("{{\"error\":{}}}", json_string(&e.to_string()));
            return;
        }
    };
    println!("{{\"connected\":true}}");
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let words: Vec<&str> = line.split_whitespace().collect();
        let answer = match words.as_slice() {
            ["report"] => report(&session),
            ["work", keyspace, n] => work(&session, keyspace, n.parse().unwrap_or(10)).await,
            ["quit"] => break,
            _ => format!("{{\"error\":{}}}", json_string(&format!("unknown command {line}"))),
        };
        println!("{answer}");
    }
}

//! The timeline's rows and the machine's topology as the page reads them (each row's CPU
//! and, in socket order, its socket, NUMA node and core; every CPU's place for the
//! hover): one shape for the viewer's server and for the report that embeds it.

use figures::graph::RowSpec;
use model::Topology;
use serde_json::{Value, json};

/// Rows bottom to top.
pub fn rows_json(rows: &[RowSpec]) -> Vec<Value> {
    rows.iter().map(|r| json!({"cpu": r.cpu.0, "socket": r.socket, "node": r.node, "core": r.core})).collect()
}

/// Every CPU the topology places, in CPU order, with the CPUs it shares its core with
/// (SMT siblings); `null` without a topology.
pub fn places_json(topology: Option<&Topology>) -> Value {
    let Some(topology) = topology else { return Value::Null };
    let places: Vec<Value> = topology
        .places()
        .iter()
        .map(|p| {
            let siblings: Vec<u32> = topology.siblings(p.cpu).iter().filter(|&&c| c != p.cpu).map(|c| c.0).collect();
            json!({"cpu": p.cpu.0, "core": p.core, "socket": p.socket, "node": p.node, "siblings": siblings})
        })
        .collect();
    Value::Array(places)
}

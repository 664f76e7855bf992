//! synth's integration tests, one binary (each links the workspace): the model against
//! the simulator's ground truth, and the critical path against the chain workloads'.

mod critical_path;
mod truth;

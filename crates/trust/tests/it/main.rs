//! trust's integration tests, one binary: the fuzzers' seeds and the replay of their corpora.

mod replay;
mod seeds;

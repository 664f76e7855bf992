//! The scheduling model: tasks, CPUs, run segments and runqueues, built in one pass over events.

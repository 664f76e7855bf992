//! Synthetic scheduler traces with known ground truth, from a small discrete-event simulation.

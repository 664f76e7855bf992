//! Figures of the scheduling model: per-core timelines, running/waiting plots and heat
//! maps, computed at the output's resolution as plain data and laid out as scenes.

pub mod palette;
pub mod running_waiting;
pub mod timeline;

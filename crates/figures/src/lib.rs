//! Figures of the scheduling model: per-core timelines, running/waiting plots and heat
//! maps, computed at the output's resolution as plain data and laid out as backend-neutral
//! scenes (the `render` crate draws them as SVG, PNG or PDF).

pub mod axis;
pub mod difference_bars;
pub mod graph;
pub mod latency_histogram;
pub mod markers;
pub mod migration_map;
pub mod palette;
mod pixel;
pub mod row_labels;
pub mod running_waiting;
pub mod running_waiting_plot;
pub mod sorted_times;
mod style;
pub mod timeline;

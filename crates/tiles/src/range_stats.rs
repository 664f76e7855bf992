//! The statistics as the page reads them (per command and per CPU, times relative to the
//! view's origin): one shape for the viewer's server and for the report that embeds it.

use analysis::stats::Stats;
use documents::page::{CommandStats, CpuStats, RangeStats};
use figures::palette::color_of_name;
use model::Nanos;

/// `stats` as the page's document: at most `rows` commands (`commandCount` says how many
/// there were), every CPU; `relative` turns a time into the page's ns from its origin.
pub fn range_stats(stats: &Stats, rows: usize, relative: impl Fn(Nanos) -> i64) -> RangeStats {
    let time = |t: Option<Nanos>| t.map(&relative);
    let commands = stats.rows.iter().take(rows).map(|row| CommandStats {
        comm: row.comm.clone(),
        pids: row.pids,
        first_run: time(row.first_run),
        last_run: time(row.last_run),
        runtime: row.runtime_ns,
        switches: row.switches,
        wait: row.wait_ns,
        max_wait: row.max_wait_ns,
        migrations: row.migrations,
        color: color_of_name(&row.comm).hex(),
    });
    let cpus = stats.cpus.iter().map(|c| CpuStats {
        cpu: c.cpu.0,
        busy: c.busy_ns,
        idle: c.idle_ns,
        uncertain: c.uncertain_ns,
        waiting: c.waiting_ns,
    });
    RangeStats {
        start: relative(stats.window.start),
        end: relative(stats.window.end),
        commands: commands.collect(),
        command_count: stats.rows.len(),
        cpus: cpus.collect(),
    }
}

//! Kernel threads: which preempt application tasks (by name), and which are bound to one
//! CPU. The kernel binds its per-CPU threads (`kworker/48:1`, `migration/26`,
//! `ksoftirqd/31`, `cpuhp/4`, `rcuc/7`, ...) to the CPU their name gives: one waiting on
//! its own busy CPU while others idle is not a failure to conserve work, since no
//! placement could have run it elsewhere. `check` tells them by both signs: the name
//! names a CPU and the trace never shows the thread running on another one.

use super::placement::Placement;
use model::{Cpu, TaskId};

/// Names of kernel threads that preempt application tasks.
const PREEMPTING: [&str; 10] =
    ["kworker", "ksoftirqd", "kcompactd", "migration", "rcu_", "kswapd", "khugepaged", "watchdog", "irq/", "kthreadd"];

/// Per-CPU kernel threads named `NAME/N` for CPU N (`kworker/N:M` apart). Not `rcuop/N`
/// and its kin (RCU callback threads for CPU N, free to run anywhere), nor `irq/N-name`
/// (N is an interrupt).
const PER_CPU: [&str; 9] =
    ["migration", "ksoftirqd", "cpuhp", "rcuc", "watchdog", "idle_inject", "ktimersoftd", "ktimers", "posixcputmr"];

/// Whether a task of this name is a kernel thread that preempts application tasks.
pub(crate) fn is_kernel_thread(comm: &str) -> bool {
    PREEMPTING.iter().any(|prefix| comm.starts_with(prefix))
}

/// The CPU a per-CPU kernel thread's name binds it to: `migration/26`, `kworker/48:1`,
/// `kworker/3:0H` (high priority), `kworker/3:1-events` (with its workqueue); not
/// `kworker/u128:2` (unbound).
pub(super) fn named_cpu(comm: &str) -> Option<Cpu> {
    let (prefix, rest) = comm.split_once('/')?;
    let cpu = if prefix == "kworker" {
        let (cpu, worker) = rest.split_once(':')?;
        let worker = worker.split_once('-').map_or(worker, |(id, _)| id);
        let worker = worker.strip_suffix('H').unwrap_or(worker);
        digits(worker)?;
        cpu
    } else if PER_CPU.contains(&prefix) {
        rest
    } else {
        return None;
    };
    digits(cpu).map(Cpu)
}

fn digits(text: &str) -> Option<u32> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok()).flatten()
}

/// Whether `task`, named `comm`, is a kernel thread bound to `cpu`: its name says so and
/// the trace never shows it running on another CPU.
pub(super) fn bound_to(placement: &Placement, task: TaskId, comm: &str, cpu: Cpu) -> bool {
    named_cpu(comm) == Some(cpu) && placement.ran_only_on(task, cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_cpu_kernel_threads_are_told_by_name() {
        for (comm, cpu) in [
            ("kworker/48:1", 48),
            ("kworker/3:0H", 3),
            ("kworker/3:1-events", 3),
            ("migration/26", 26),
            ("ksoftirqd/31", 31),
            ("cpuhp/0", 0),
            ("rcuc/7", 7),
        ] {
            assert_eq!(named_cpu(comm), Some(Cpu(cpu)), "{comm}");
        }
        for comm in
            ["kworker/u128:2", "kworker/48", "rcuop/3", "irq/25-eth0", "kcompactd0", "barrier", "migration/", "x/1"]
        {
            assert_eq!(named_cpu(comm), None, "{comm}");
        }
    }
}

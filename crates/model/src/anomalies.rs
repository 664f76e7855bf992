//! Things in an event stream that do not add up. Each kind is counted (with the first
//! time it happened) rather than stopping the build, and every count is shown to the
//! user with a plain explanation.

use tracedat::Nanos;

/// How much an anomaly undermines the results.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Expected kernel behaviour worth knowing; results are unaffected.
    Info,
    /// Some times are uncertain; the model marks them so.
    Warning,
}

macro_rules! anomaly_kinds {
    ($($kind:ident = $severity:ident, $text:literal;)*) => {
        /// A kind of inconsistency.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Anomaly { $($kind),* }

        impl Anomaly {
            pub const ALL: &'static [Anomaly] = &[$(Anomaly::$kind),*];

            pub fn severity(self) -> Severity {
                match self { $(Anomaly::$kind => Severity::$severity),* }
            }

            /// A one-line explanation for users.
            pub fn description(self) -> &'static str {
                match self { $(Anomaly::$kind => $text),* }
            }
        }
    };
}

anomaly_kinds! {
    UnrecordedSwitch = Warning, "a CPU changed tasks without a recorded sched_switch; the time between the last sign of the old task and the first of the new one is uncertain";
    SwitchDuringLoss = Info, "sched_switch after lost events: the CPU is known again from here";
    WakeupOfRunningTask = Info, "wakeup of a task that was running or already runnable (it had not gone to sleep yet)";
    PidReused = Warning, "a pid was reused by a new task before the old one was seen to exit";
    MigrateFromUnexpectedCpu = Info, "sched_migrate_task names a source CPU other than the one the task was last seen on";
    MissingField = Warning, "a scheduler event lacked a field the model needs and was skipped";
    TimeWentBackwards = Warning, "an event's timestamp is earlier than the previous one on its CPU";
    CpuOutOfRange = Warning, "an event named a CPU beyond the trace's CPU count";
}

/// Counts of each anomaly, with the first time each was seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Anomalies {
    counts: Vec<(u64, Nanos)>,
}

impl Anomalies {
    pub fn count(&mut self, kind: Anomaly, at: Nanos) {
        if self.counts.is_empty() {
            self.counts = vec![(0, Nanos::ZERO); Anomaly::ALL.len()];
        }
        let slot = &mut self.counts[kind as usize];
        if slot.0 == 0 {
            slot.1 = at;
        }
        slot.0 += 1;
    }

    pub fn get(&self, kind: Anomaly) -> u64 {
        self.counts.get(kind as usize).map_or(0, |c| c.0)
    }

    /// The anomalies that happened: kind, count, first time.
    pub fn iter(&self) -> impl Iterator<Item = (Anomaly, u64, Nanos)> + '_ {
        Anomaly::ALL.iter().filter_map(|&kind| {
            let &(n, first) = self.counts.get(kind as usize)?;
            (n > 0).then_some((kind, n, first))
        })
    }

    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_with_first_time() {
        let mut a = Anomalies::default();
        assert!(a.is_empty());
        a.count(Anomaly::PidReused, Nanos(5));
        a.count(Anomaly::PidReused, Nanos(9));
        assert_eq!(a.get(Anomaly::PidReused), 2);
        assert_eq!(a.iter().collect::<Vec<_>>(), [(Anomaly::PidReused, 2, Nanos(5))]);
        assert!(Anomaly::ALL.iter().all(|k| !k.description().is_empty()));
    }
}

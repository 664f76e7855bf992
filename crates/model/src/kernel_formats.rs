//! The scheduler events' format files of a current kernel (Linux 6.18), as tracefs shows
//! them: the events this crate decodes, in the layout whoever writes scheduler traces for
//! tests or simulation (`synth`, `trust`, this crate's tests) gives them. One copy, kept
//! beside the decoder and reached through this crate instead of a path into another.

/// The format files of Linux 6.18's scheduler events, by event name, in the order
/// `synth` writes them into a file (see `formats/README.md`).
pub const SCHED_FORMATS: [(&str, &str); 8] = [
    ("sched_switch", include_str!("../formats/sched_switch.format")),
    ("sched_waking", include_str!("../formats/sched_waking.format")),
    ("sched_wakeup", include_str!("../formats/sched_wakeup.format")),
    ("sched_wakeup_new", include_str!("../formats/sched_wakeup_new.format")),
    ("sched_migrate_task", include_str!("../formats/sched_migrate_task.format")),
    ("sched_process_fork", include_str!("../formats/sched_process_fork.format")),
    ("sched_process_exec", include_str!("../formats/sched_process_exec.format")),
    ("sched_process_exit", include_str!("../formats/sched_process_exit.format")),
];

/// The text of one of [`SCHED_FORMATS`] by event name.
pub fn sched_format(name: &str) -> Option<&'static str> {
    SCHED_FORMATS.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
}
